/* cli_smooth.c — not yet implemented. */
