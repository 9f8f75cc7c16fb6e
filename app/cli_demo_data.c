/* cli_demo_data.c — not yet implemented. */
