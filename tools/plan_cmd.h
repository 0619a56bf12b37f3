// dash-attn: the `plan` subcommand (runs anywhere, no GPU).
#pragma once

// argv[0] is the first flag (the subcommand name is not included). Returns the exit status:
// 0 on success, 2 on a bad command line, 1 when an output file can't be written.
int plan_main(int argc, char** argv);
void plan_usage();
