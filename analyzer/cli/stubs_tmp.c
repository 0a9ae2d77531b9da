/* stubs_tmp.c: commands not written yet. */
#include "cli.h"
int iq_cmd_analyze(int argc, char **argv) { (void)argc; (void)argv; return IQ_EXIT_INTERNAL; }
int iq_cmd_ingest(int argc, char **argv) { (void)argc; (void)argv; return IQ_EXIT_INTERNAL; }
int iq_cmd_query(int argc, char **argv) { (void)argc; (void)argv; return IQ_EXIT_INTERNAL; }
int iq_cmd_sniff(int argc, char **argv) { (void)argc; (void)argv; return IQ_EXIT_INTERNAL; }
int iq_cmd_rules(int argc, char **argv) { (void)argc; (void)argv; return IQ_EXIT_INTERNAL; }
