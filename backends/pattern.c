/*
 * gpusim: buffer patterns and the private disk directory (see pattern.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "backend.h"
#include "pattern.h"

void
gs_pattern_fill_from(guint64 *words, gsize n, guint64 seed, gsize first)
{
	for (gsize i = 0; i < n; i++)
		words[i] = gs_pattern_word(seed, first + i);
}

gboolean
gs_pattern_check_from(const guint64 *words, gsize n, guint64 seed, gsize first)
{
	for (gsize i = 0; i < n; i++) {
		if (words[i] != gs_pattern_word(seed, first + i))
			return FALSE;
	}
	return TRUE;
}

void
gs_pattern_fill(guint64 *words, gsize n, guint64 seed)
{
	gs_pattern_fill_from(words, n, seed, 0);
}

gboolean
gs_pattern_check(const guint64 *words, gsize n, guint64 seed)
{
	return gs_pattern_check_from(words, n, seed, 0);
}

/*
 * The private directories alive, so that an interrupted run can remove them.
 * A pthread mutex, not a GMutex: ThreadSanitizer does not see GLib's futexes.
 */
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static GPtrArray *dirs_alive; /* char* */

static void
remove_tree(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (d != NULL) {
		while ((name = g_dir_read_name(d)) != NULL) {
			g_autofree char *path = g_build_filename(dir, name, NULL);

			g_unlink(path);
		}
		g_dir_close(d);
	}
	g_rmdir(dir);
}

char *
gs_private_dir_new(const char *parent, GError **error)
{
	g_autofree char *template = g_build_filename(parent, "gpusim-XXXXXX", NULL);

	/* g_mkdtemp creates the directory with mode 0700. */
	if (g_mkdtemp(template) == NULL) {
		int err = errno;

		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID,
			    "memory.disk.path: cannot create a private directory in %s: %s", parent,
			    g_strerror(err));
		return NULL;
	}
	pthread_mutex_lock(&dirs_lock);
	if (dirs_alive == NULL)
		dirs_alive = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(dirs_alive, g_strdup(template));
	pthread_mutex_unlock(&dirs_lock);
	return g_steal_pointer(&template);
}

void
gs_private_dir_remove(const char *dir)
{
	if (dir == NULL)
		return;
	pthread_mutex_lock(&dirs_lock);
	for (guint i = 0; dirs_alive != NULL && i < dirs_alive->len; i++) {
		if (strcmp(dirs_alive->pdata[i], dir) == 0) {
			g_ptr_array_remove_index_fast(dirs_alive, i);
			break;
		}
	}
	pthread_mutex_unlock(&dirs_lock);
	remove_tree(dir);
}

/*
 * Renamed first, so that the run's threads, which go on meanwhile, can no
 * longer create files in it by its name; a file made just before the rename
 * is listed after it.
 */
static void
remove_interrupted(const char *dir)
{
	g_autofree char *moved = g_strconcat(dir, "-interrupted", NULL);

	remove_tree(g_rename(dir, moved) == 0 ? moved : dir);
}

static void *
guard_main(void *data)
{
	sigset_t *watched = data;
	int sig = 0;

	while (sigwait(watched, &sig) != 0)
		;
	pthread_mutex_lock(&dirs_lock); /* held to the end: no directory comes or goes now */
	for (guint i = 0; dirs_alive != NULL && i < dirs_alive->len; i++)
		remove_interrupted(dirs_alive->pdata[i]);
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, watched, NULL);
	raise(sig);
	_exit(128 + sig); /* not reached: the signal's default action ends the process */
}

void
gs_private_dirs_guard(void)
{
	static gsize started;
	static sigset_t watched;
	static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
	pthread_t guard;
	guint n_watched = 0;

	if (!g_once_init_enter(&started))
		return;
	sigemptyset(&watched);
	for (guint i = 0; i < G_N_ELEMENTS(signals); i++) {
		struct sigaction now;

		/* A signal ignored (nohup, a shell's background job) stays ignored. */
		if (sigaction(signals[i], NULL, &now) == 0 && now.sa_handler != SIG_IGN) {
			sigaddset(&watched, signals[i]);
			n_watched++;
		}
	}
	if (n_watched > 0) {
		pthread_sigmask(SIG_BLOCK, &watched, NULL);
		if (pthread_create(&guard, NULL, guard_main, &watched) == 0)
			pthread_detach(guard);
		else
			pthread_sigmask(SIG_UNBLOCK, &watched, NULL);
	}
	g_once_init_leave(&started, 1);
}

static gboolean
io_error(GError **error, const char *what, const char *path, int err)
{
	g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED, "%s %s: %s", what, path,
		    g_strerror(err));
	return FALSE;
}

gboolean
gs_file_write_all(const char *path, const void *data, gsize n, GError **error)
{
	int fd = g_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;

	if (fd < 0)
		return io_error(error, "cannot create", path, errno);
	while (n > 0) {
		gssize done = write(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			int err = done < 0 ? errno : ENOSPC;

			close(fd);
			return io_error(error, "cannot write", path, err);
		}
		p += done;
		n -= (gsize) done;
	}
	if (close(fd) != 0)
		return io_error(error, "cannot write", path, errno);
	return TRUE;
}

gboolean
gs_file_read_all(const char *path, void *data, gsize n, GError **error)
{
	int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
	char *p = data;

	if (fd < 0)
		return io_error(error, "cannot open", path, errno);
	while (n > 0) {
		gssize done = read(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			int err = done < 0 ? errno : EIO;

			close(fd);
			return io_error(error, "cannot read", path, err);
		}
		p += done;
		n -= (gsize) done;
	}
	close(fd);
	return TRUE;
}
