/*
 * gpusim tests: the engine's test cases, one file per concern, run by one
 * program (tests/test-engine.c).
 */
#ifndef GPUSIM_TEST_ENGINE_H
#define GPUSIM_TEST_ENGINE_H

#include "testlib.h"

TCase *gs_test_engine_alloc(void);
TCase *gs_test_engine_deadlock(void);
TCase *gs_test_engine_assoc(void);
TCase *gs_test_engine_metrics(void);

/* Drives thread 1 (dedicated to task 1) into @state with real engine calls. */
void te_drive_to(TlEngine *t, GsThreadState state);

#define TE_HELPER 9 /* thread 9, dedicated to task 9, keeps task 9 running */

#endif /* GPUSIM_TEST_ENGINE_H */
