/* cli.c — not yet implemented. */
int main(void) { return 0; }
