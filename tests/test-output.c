/*
 * gpusim tests: a command's outputs (src/report/output.h). One row per kind of thing
 * at a path (nothing, a file, links, a directory, a device, a FIFO, a missing
 * folder), each added, written and committed, with what must be there after;
 * then what a dropped set leaves (nothing new, the old files as they were,
 * no temporaries, no folder it made), the staged file another program
 * writes, and standard output.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "testlib.h"
#include "report/output.h"

static char *
temp_dir(void)
{
	GError *error = NULL;
	char *dir = g_dir_make_tmp("gpusim-output-XXXXXX", &error);

	ck_assert_msg(dir != NULL, "%s", error != NULL ? error->message : "?");
	return dir;
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Names in @dir, sorted and space-separated: what a test left there. */
static char *
listing(const char *dir)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;

	ck_assert_ptr_nonnull(d);
	while ((name = g_dir_read_name(d)) != NULL)
		g_ptr_array_add(names, g_strdup(name));
	g_dir_close(d);
	g_ptr_array_sort(names, compare_names);
	g_ptr_array_add(names, NULL);
	return g_strjoinv(" ", (char **) names->pdata);
}

static void
remove_tree(const char *path)
{
	GStatBuf st;

	if (g_lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		GDir *d = g_dir_open(path, 0, NULL);
		const char *name;

		while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
			g_autofree char *child = g_build_filename(path, name, NULL);

			remove_tree(child);
		}
		if (d != NULL)
			g_dir_close(d);
		g_rmdir(path);
	} else {
		g_unlink(path);
	}
}

static char *
contents_of(const char *path)
{
	char *text = NULL;

	ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
	return text;
}

/* ---- what is at the path ---- */

typedef enum {
	AT_NOTHING,
	AT_FILE,       /* "old" */
	AT_LINK,       /* a link to target, which holds "old" */
	AT_LINK_CHAIN, /* a link to a link to target */
	AT_DANGLING,   /* a link to target, which does not exist */
	AT_LINK_LOOP,  /* a link to itself */
	AT_DIR,
	AT_DEV_NULL,    /* out is a link to /dev/null */
	AT_MISSING_DIR, /* out is inside a folder that does not exist */
	AT_UNDER_FILE,  /* out is inside a regular file */
	AT_READ_ONLY,   /* a file the user may not write */
} At;

static const struct {
	/* Inputs */
	At at;
	/* Outputs */
	gboolean refused;
	const char *listing; /* the folder afterwards */
	const char *target;  /* the file that holds "new" afterwards, or NULL */
	gboolean root_skips; /* root may write anything: the row tells nothing then */
} at_rows[] = {
	{AT_NOTHING, FALSE, "out", "out", FALSE},
	{AT_FILE, FALSE, "out", "out", FALSE},
	{AT_LINK, FALSE, "out target", "target", FALSE},
	{AT_LINK_CHAIN, FALSE, "middle out target", "target", FALSE},
	{AT_DANGLING, FALSE, "out target", "target", FALSE},
	{AT_LINK_LOOP, TRUE, "out", NULL, FALSE},
	{AT_DIR, TRUE, "out", NULL, FALSE},
	{AT_DEV_NULL, FALSE, "out", NULL, FALSE},
	{AT_MISSING_DIR, TRUE, "", NULL, FALSE},
	{AT_UNDER_FILE, TRUE, "file", NULL, FALSE},
	{AT_READ_ONLY, TRUE, "out", NULL, TRUE},
};

/* Makes what row @at puts in @dir; returns the output's path. */
static char *
set_up(const char *dir, At at)
{
	g_autofree char *target = g_build_filename(dir, "target", NULL);
	g_autofree char *middle = g_build_filename(dir, "middle", NULL);
	char *out = g_build_filename(dir, "out", NULL);

	switch (at) {
	case AT_NOTHING:
		break;
	case AT_FILE:
		ck_assert(g_file_set_contents(out, "old", -1, NULL));
		break;
	case AT_LINK:
		ck_assert(g_file_set_contents(target, "old", -1, NULL));
		ck_assert_int_eq(symlink("target", out), 0);
		break;
	case AT_LINK_CHAIN:
		ck_assert(g_file_set_contents(target, "old", -1, NULL));
		ck_assert_int_eq(symlink(target, middle), 0);
		ck_assert_int_eq(symlink("middle", out), 0);
		break;
	case AT_DANGLING:
		ck_assert_int_eq(symlink("target", out), 0);
		break;
	case AT_LINK_LOOP:
		ck_assert_int_eq(symlink("out", out), 0);
		break;
	case AT_DIR:
		ck_assert_int_eq(g_mkdir(out, 0755), 0);
		break;
	case AT_DEV_NULL:
		ck_assert_int_eq(symlink("/dev/null", out), 0);
		break;
	case AT_MISSING_DIR:
		g_free(out);
		out = g_build_filename(dir, "no", "such", "out", NULL);
		break;
	case AT_UNDER_FILE:
		g_free(out);
		out = g_build_filename(dir, "file", NULL);
		ck_assert(g_file_set_contents(out, "", -1, NULL));
		g_free(middle);
		middle = out;
		out = g_build_filename(middle, "out", NULL);
		break;
	case AT_READ_ONLY:
		ck_assert(g_file_set_contents(out, "old", -1, NULL));
		ck_assert_int_eq(g_chmod(out, 0444), 0);
		break;
	}
	return out;
}

START_TEST(test_at_path)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *path = NULL;
	g_autofree char *left = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *out;

	if (at_rows[_i].root_skips && geteuid() == 0) {
		g_rmdir(dir);
		return;
	}
	path = set_up(dir, at_rows[_i].at);
	out = gs_output_set_add(set, path, &error);
	if (at_rows[_i].refused) {
		ck_assert_ptr_null(out);
		ck_assert_msg(strstr(error->message, path) != NULL, "message: %s", error->message);
		ck_assert_msg(g_str_has_prefix(error->message, "cannot write "), "message: %s",
			      error->message);
	} else {
		ck_assert_msg(out != NULL, "refused: %s", error->message);
		ck_assert(gs_output_write(out, "new", &error));
		ck_assert(gs_output_set_commit(set, &error));
	}
	g_clear_pointer(&set, gs_output_set_free);
	left = listing(dir);
	ck_assert_str_eq(left, at_rows[_i].listing);
	if (at_rows[_i].target != NULL) {
		g_autofree char *target = g_build_filename(dir, at_rows[_i].target, NULL);
		g_autofree char *text = contents_of(target);

		ck_assert_str_eq(text, "new");
	}
	if (at_rows[_i].at == AT_LINK || at_rows[_i].at == AT_LINK_CHAIN ||
	    at_rows[_i].at == AT_DANGLING || at_rows[_i].at == AT_DEV_NULL)
		ck_assert(g_file_test(path, G_FILE_TEST_IS_SYMLINK));
	if (at_rows[_i].at == AT_FILE || at_rows[_i].at == AT_READ_ONLY) {
		g_autofree char *text = contents_of(path);

		ck_assert_str_eq(text, at_rows[_i].refused ? "old" : "new");
	}
	remove_tree(dir);
}
END_TEST

/* A replaced file keeps its permission bits. */
START_TEST(test_mode_kept)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *path = g_build_filename(dir, "out", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *out;
	GStatBuf st;

	ck_assert(g_file_set_contents(path, "old", -1, NULL));
	ck_assert_int_eq(g_chmod(path, 0640), 0);
	out = gs_output_set_add(set, path, &error);
	ck_assert(out != NULL && gs_output_write(out, "new", &error));
	ck_assert(gs_output_set_commit(set, &error));
	ck_assert_int_eq(g_stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	remove_tree(dir);
}
END_TEST

/* ---- a set dropped before its commit ---- */

START_TEST(test_dropped_set)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *old = g_build_filename(dir, "old", NULL);
	g_autofree char *fresh = g_build_filename(dir, "fresh", NULL);
	g_autofree char *nested = g_build_filename(dir, "made", "deeper", NULL);
	g_autofree char *inside = g_build_filename(nested, "x", NULL);
	g_autofree char *left = NULL;
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	GsOutputSet *set = gs_output_set_new();
	GsOutput *a, *b, *c;

	ck_assert(g_file_set_contents(old, "old", -1, NULL));
	ck_assert(gs_output_set_make_dir(set, nested, &error));
	a = gs_output_set_add(set, old, &error);
	b = gs_output_set_add(set, fresh, &error);
	c = gs_output_set_add(set, inside, &error);
	ck_assert(a != NULL && b != NULL && c != NULL);
	ck_assert(gs_output_write(a, "new", &error));
	ck_assert(gs_output_write(b, "new", &error));
	ck_assert_ptr_nonnull(gs_output_staged_path(c, &error));
	gs_output_set_free(set);
	left = listing(dir);
	ck_assert_str_eq(left, "old");
	text = contents_of(old);
	ck_assert_str_eq(text, "old");
	remove_tree(dir);
}
END_TEST

/* A folder that was there stays, with what it holds, when the set is dropped. */
START_TEST(test_dropped_set_keeps_folders)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *sub = g_build_filename(dir, "sub", NULL);
	g_autofree char *left = NULL;
	g_autoptr(GError) error = NULL;
	GsOutputSet *set = gs_output_set_new();

	ck_assert_int_eq(g_mkdir(sub, 0755), 0);
	ck_assert(gs_output_set_make_dir(set, sub, &error));
	gs_output_set_free(set);
	left = listing(dir);
	ck_assert_str_eq(left, "sub");
	remove_tree(dir);
}
END_TEST

/* ---- content another program writes ---- */

START_TEST(test_staged_path)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *path = g_build_filename(dir, "plot.svg", NULL);
	g_autofree char *text = NULL;
	g_autofree char *left = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *out = gs_output_set_add(set, path, &error);
	const char *staged;

	ck_assert_ptr_nonnull(out);
	staged = gs_output_staged_path(out, &error);
	ck_assert_ptr_nonnull(staged);
	/* Beside its file and hidden, so that the rename stays on one file system. */
	ck_assert(g_str_has_prefix(staged, dir));
	ck_assert(strstr(staged, "/.plot.svg.") != NULL);
	ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
	ck_assert(g_file_set_contents(staged, "<svg/>", -1, NULL));
	ck_assert_str_eq(gs_output_staged_path(out, &error), staged);
	ck_assert(gs_output_set_commit(set, &error));
	text = contents_of(path);
	ck_assert_str_eq(text, "<svg/>");
	left = listing(dir);
	ck_assert_str_eq(left, "plot.svg");
	remove_tree(dir);
}
END_TEST

/* An output never given content is left as it was. */
START_TEST(test_nothing_written)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *path = g_build_filename(dir, "out", NULL);
	g_autofree char *left = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();

	ck_assert_ptr_nonnull(gs_output_set_add(set, path, &error));
	ck_assert(gs_output_set_commit(set, &error));
	left = listing(dir);
	ck_assert_str_eq(left, "");
	remove_tree(dir);
}
END_TEST

/* ---- streams ---- */

START_TEST(test_stdout)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *path = g_build_filename(dir, "stdout", NULL);
	g_autofree char *got = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *out = gs_output_set_add(set, "-", &error);
	int fd, saved;
	gboolean ok;

	ck_assert_ptr_nonnull(out);
	ck_assert(gs_output_write(out, "line 1\nline 2\n", &error));
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	ok = gs_output_set_commit(set, &error);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	ck_assert(ok);
	got = contents_of(path);
	ck_assert_str_eq(got, "line 1\nline 2\n");
	/* "-" is standard output, never a file named "-". */
	ck_assert(!g_file_test("-", G_FILE_TEST_EXISTS));
	remove_tree(dir);
}
END_TEST

/*
 * Content written in pieces, larger than a piece of the copy to a stream:
 * a file gets it whole at the commit; standard output too, after what was
 * printed before.
 */
START_TEST(test_writer)
{
	g_autofree char *dir = temp_dir();
	g_autofree char *path = g_build_filename(dir, "result.json", NULL);
	g_autofree char *captured = g_build_filename(dir, "stdout", NULL);
	g_autofree char *got = NULL;
	g_autofree char *printed = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *file = gs_output_set_add(set, path, &error);
	GsOutput *out = gs_output_set_add(set, "-", &error);
	GString *want = g_string_new(NULL);
	GsOutputWriter *a, *b;
	int fd, saved;
	gboolean ok;

	ck_assert_ptr_nonnull(file);
	ck_assert_ptr_nonnull(out);
	a = gs_output_writer_new(file, &error);
	b = gs_output_writer_new(out, &error);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (guint i = 0; i < 20000; i++) {
		g_autofree char *line = g_strdup_printf("line %u\n", i);

		g_string_append(want, line);
		ck_assert(gs_output_writer_add(line, strlen(line), a));
		ck_assert(gs_output_writer_add(line, strlen(line), b));
	}
	ck_assert(gs_output_writer_close(a, &error));
	ck_assert(gs_output_writer_close(b, &error));
	ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	printf("before\n");
	ok = gs_output_set_commit(set, &error);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	ck_assert(ok);
	got = contents_of(path);
	ck_assert_str_eq(got, want->str);
	g_string_prepend(want, "before\n");
	printed = contents_of(captured);
	ck_assert_str_eq(printed, want->str);
	g_string_free(want, TRUE);
	remove_tree(dir);
}
END_TEST

/* A stream that cannot take the content fails the commit, naming it and why. */
START_TEST(test_full_device)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *out;

	if (!g_file_test("/dev/full", G_FILE_TEST_EXISTS))
		return;
	out = gs_output_set_add(set, "/dev/full", &error);
	ck_assert_ptr_nonnull(out);
	ck_assert(gs_output_write(out, "x", &error));
	ck_assert(!gs_output_set_commit(set, &error));
	ck_assert_msg(strstr(error->message, "cannot write /dev/full: ") != NULL, "message: %s",
		      error->message);
}
END_TEST

Suite *gs_test_suite_output(void);

Suite *
gs_test_suite_output(void)
{
	Suite *s = suite_create("output");
	TCase *tc;

	tc = tcase_create("paths");
	tcase_add_loop_test(tc, test_at_path, 0, G_N_ELEMENTS(at_rows));
	tcase_add_test(tc, test_mode_kept);
	suite_add_tcase(s, tc);

	tc = tcase_create("sets");
	tcase_add_test(tc, test_dropped_set);
	tcase_add_test(tc, test_dropped_set_keeps_folders);
	tcase_add_test(tc, test_staged_path);
	tcase_add_test(tc, test_nothing_written);
	suite_add_tcase(s, tc);

	tc = tcase_create("streams");
	tcase_add_test(tc, test_stdout);
	tcase_add_test(tc, test_writer);
	tcase_add_test(tc, test_full_device);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_output());
}
