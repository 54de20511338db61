// gpudoctor entry point: dispatches to the subcommands in src/cli/.
#include "cli/commands.h"

int main(int argc, char** argv) { return gpudoctor::Main(argc, argv); }
