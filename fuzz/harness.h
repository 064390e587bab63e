/*
 * gpusim fuzzing: what the harnesses share (fuzz/README.md).
 *
 * Each harness defines LLVMFuzzerTestOneInput(). Built with clang's
 * -fsanitize=fuzzer it is a libFuzzer target (make fuzz); built with
 * replay.c's main() it runs each file named on its command line once, which
 * is how make check replays fuzz/regressions/ with any compiler.
 *
 * A harness aborts on every breach of a property the project promises: an
 * error message without "file:line:column: ", a GLib warning or critical, a
 * scenario written by import-rmm-log that does not load. The sanitizers
 * catch the rest.
 */
#ifndef GPUSIM_FUZZ_HARNESS_H
#define GPUSIM_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <gpusim/workload.h>

/* Shared by every harness (harness.c): makes GLib's warnings and criticals fatal. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless @message reads "FILE:LINE:COLUMN: what is wrong", LINE and COLUMN from 1. */
void fuzz_check_message(const char *what, const char *message);

/*
 * Simulates @w (generating its tasks first) within a few thousand events and
 * a minute of simulated time, and writes its reports to memory, unless its
 * ops alone would take too long; what the run does is not checked.
 */
void fuzz_simulate(GsWorkload *w);

/* Aborts, saying @what went wrong with @detail. */
G_GNUC_NORETURN void fuzz_fail(const char *what, const char *detail);

#endif /* GPUSIM_FUZZ_HARNESS_H */
