/*
 * gpusim tests: the OOM engine (engine.h), driven call by call with the
 * invariant checker run after every step.
 */
#include "config.h"

#include "test-engine.h"

static Suite *
gs_test_suite_engine(void)
{
	Suite *s = suite_create("engine");

	suite_add_tcase(s, gs_test_engine_alloc());
	suite_add_tcase(s, gs_test_engine_deadlock());
	suite_add_tcase(s, gs_test_engine_assoc());
	suite_add_tcase(s, gs_test_engine_metrics());
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_engine());
}
