/* cli_info.c — not yet implemented. */
