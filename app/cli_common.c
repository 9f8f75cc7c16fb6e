/* cli_common.c — not yet implemented. */
