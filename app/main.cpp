// warden — a local LLM server. See README.md; the command line is in cli.cpp.
#include "app/cli.h"

int main(int argc, char** argv) { return warden::app::run_cli(argc, argv); }
