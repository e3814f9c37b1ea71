/* Command-line front end: one subcommand per stage. */
#ifndef PAIRBOUND_CLI_H
#define PAIRBOUND_CLI_H

/* Run `pairbound ARGS`; returns the process exit status (0 ok, 1 failure, 2 usage). */
int pb_cli_main(int argc, char **argv);

#endif /* PAIRBOUND_CLI_H */
