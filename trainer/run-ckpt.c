/* run-ckpt.c - hgtrain's save dir and its checkpoints: their paths, a
 * save (one file from rank 0, or a shard per owning rank and rank 0's
 * index), the retention of interval and epoch checkpoints
 * (--keep-interval-updates, --keep-last-epochs), and what rank 0 does to
 * --save-dir before training: made, locked for one job, cleaned of
 * interrupted saves, --plan's strategy written, checkpoint_best.h5's
 * metric read.  Uses the log (run-log.c) and no other file of the run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "controller/hg_controller.h"
#include "trainer/run-impl.h"

int hg__run_ckpt_path(const struct hg__run *r, const char *name, char *out, size_t len)
{
    return snprintf(out, len, "%s/%s", r->o.save_dir, name) >= (int)len ? -1 : 0;
}

int hg__run_save(struct hg__run *r, const char *name, int64_t iter_step, char *err,
                 size_t errlen)
{
    char path[4096];
    if (!r->o.save_sharded) {
        /* rank 0 writes for everyone: the parameters are equal, and the
         * optimizer state on other PS ranks comes to it first */
        if (hg_ctl_sync_state(r->ctl, err, errlen) != 0)
            return -1;
        if (r->rank != 0)
            return 0;
    }
    if (hg__run_ckpt_path(r, name, path, sizeof(path)) != 0)
        return hg_kerr(err, errlen, "--save-dir too long");
    struct hg_ckpt_meta m = {
        /* the attribute epoch is iter_epoch: the epoch a resume trains in
         * (a save in the middle of epoch 1 says 1, not 0) */
        .epoch = iter_step < 0 ? r->epoch + 1 : r->epoch,
        .num_updates = (int64_t)r->num_updates,
        .iter = {.epoch = (uint64_t)(iter_step < 0 ? r->epoch + 1 : r->epoch),
                 .step = iter_step < 0 ? 0 : iter_step,
                 .segs = iter_step < 0 ? NULL : r->segs,
                 .nsegs = iter_step < 0 ? 0 : r->nsegs,
                 .data_n = r->train.n, .data_hash = r->data_hash},
        .seed = (uint64_t)r->o.seed,
        .best_metric = r->best,
        .metric_name = r->o.best_checkpoint_metric,
        .maximize = r->o.maximize_best_checkpoint_metric,
        .train_wall = r->train_wall,
        .wall = hg_now() - r->t_start,
        .options = r->opts_text,
        .strategy = r->plan_text,
    };
    struct hg_graph *g;
    struct hg_exec *ex;
    if (hg_ctl_state_view(r->ctl, &g, &ex, err, errlen) != 0)
        return -1;
    if (!r->o.save_sharded)
        return hg_ckpt_save(path, g, ex, &m, err, errlen);
    /* every rank writes the parameters it owns, rank 0 the index */
    int np = hg_graph_n_params(g);
    int *owner = malloc((size_t)(np > 0 ? np : 1) * sizeof(int)); /* [np] */
    if (!owner)
        return hg_kerr(err, errlen, "out of memory");
    hg_ctl_param_owners(r->ctl, owner);
    int rc = hg_ckpt_save_sharded(path, g, ex, &m,
                                  r->comm, owner, err, errlen);
    free(owner);
    return rc;
}

/* The mode of what hgtrain creates in --save-dir (and --log-file,
 * --trace): 0600, 0640 with --group-readable. */
static mode_t file_mode(const struct hg__run *r)
{
    return r->o.group_readable ? 0640 : 0600;
}

/* Whether the open file fd (named path) is one hgtrain may write to: a
 * regular file of ours with one link that nobody else can write.  -1
 * naming it otherwise. */
static int check_ours(int fd, const char *what, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return hg_kerr(err, errlen, "%s %s: %s", what, path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return hg_kerr(err, errlen, "%s %s: not a regular file: refused", what, path);
    if (st.st_uid != geteuid())
        return hg_kerr(err, errlen, "%s %s: owned by uid %ld, not by us (uid %ld): refused "
                       "(remove it, or choose another path)", what, path, (long)st.st_uid,
                       (long)geteuid());
    if (st.st_nlink != 1)
        return hg_kerr(err, errlen, "%s %s: has %ld hard links: refused (remove it)", what,
                       path, (long)st.st_nlink);
    if (st.st_mode & 022)
        return hg_kerr(err, errlen, "%s %s: mode %04o lets others write it: refused "
                       "(chmod go-w %s)", what, path, (unsigned)(st.st_mode & 07777), path);
    return 0;
}

int hg__run_open_file(const struct hg__run *r, const char *path, int append, const char *what,
                      char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : 0),
                  file_mode(r));
    if (fd < 0)
        return hg_kerr(err, errlen, "%s %s: %s", what, path,
                       errno == ELOOP ? "a symbolic link: refused, never followed"
                                      : strerror(errno));
    int rc = check_ours(fd, what, path, err, errlen);
    /* truncated only once it is known to be ours */
    if (rc == 0 && !append && ftruncate(fd, 0) != 0)
        rc = hg_kerr(err, errlen, "%s %s: %s", what, path, strerror(errno));
    if (rc != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A directory others can write, where they could plant names: group or
 * others may write it and it has no sticky bit (with the sticky bit, as
 * /tmp, they cannot remove or rename our files, and whatever they plant is
 * never followed), or another user (not root) owns it.  Absent: 0. */
int hg__run_check_save_dir(const struct hg__run *r, char *err, size_t errlen)
{
    const char *d = r->o.save_dir;
    struct stat st;
    if (r->o.no_save || stat(d, &st) != 0)
        return 0;
    const char *why = NULL;
    char buf[128];
    if (!S_ISDIR(st.st_mode))
        return hg_kerr(err, errlen, "--save-dir %s: not a directory", d);
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        snprintf(buf, sizeof(buf), "owned by uid %ld, not by us (uid %ld)", (long)st.st_uid,
                 (long)geteuid());
        why = buf;
    } else if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
        snprintf(buf, sizeof(buf), "mode %04o lets %s write it", (unsigned)(st.st_mode & 07777),
                 st.st_mode & 002 ? "everyone" : "the group");
        why = buf;
    }
    if (!why)
        return 0;
    if (!r->o.allow_shared_save_dir)
        return hg_kerr(err, errlen, "--save-dir %s: %s, so others could replace or plant "
                       "checkpoints: refused (chmod go-w %s, chmod +t %s, or "
                       "--allow-shared-save-dir to take the risk)", d, why, d, d);
    if (r->rank == 0)
        fprintf(stderr, "hgtrain: warning: --save-dir %s: %s; used as "
                "--allow-shared-save-dir says (symlinks in it are never followed)\n", d, why);
    return 0;
}

int hg__run_check_loaded(const struct hg__run *r, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return hg_kerr(err, errlen, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return hg_kerr(err, errlen, "%s: not a regular file", path);
    const char *why = NULL;
    char buf[128];
    if (st.st_uid != geteuid()) {
        snprintf(buf, sizeof(buf), "owned by uid %ld, not by us (uid %ld)", (long)st.st_uid,
                 (long)geteuid());
        why = buf;
    } else if (st.st_mode & 022) {
        snprintf(buf, sizeof(buf), "mode %04o lets others write it",
                 (unsigned)(st.st_mode & 07777));
        why = buf;
    }
    if (!why)
        return 0;
    if (!r->o.allow_shared_save_dir)
        return hg_kerr(err, errlen, "checkpoint %s: %s: refused (copy it to a file of "
                       "your own, or --allow-shared-save-dir to take the risk)", path, why);
    fprintf(stderr, "hgtrain: warning: checkpoint %s: %s; loaded as "
            "--allow-shared-save-dir says\n", path, why);
    return 0;
}

/* One job per --save-dir: an flock on SAVE_DIR/hgtrain.lock, taken by
 * rank 0 and held until the process exits (even by kill -9, so no stale
 * lock is left), the file naming its holder for the next job's message.
 * The file is opened without following a symlink and created O_EXCL; one
 * that is not a regular file of ours nobody else can write is refused,
 * even with --allow-shared-save-dir (it would not keep another job out). */
static int lock_save_dir(struct hg__run *r, char *err, size_t errlen)
{
    char path[4096];
    if (hg__run_ckpt_path(r, "hgtrain.lock", path, sizeof(path)) != 0)
        return hg_kerr(err, errlen, "--save-dir too long");
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode(r));
        if (fd < 0 && errno != ENOENT && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return hg_kerr(err, errlen, "--save-dir %s: %s: %s", r->o.save_dir, path,
                       errno == ELOOP ? "a symbolic link (planted?): refused, never "
                       "followed; remove it" : strerror(errno));
    char what[4200];
    snprintf(what, sizeof(what), "--save-dir %s: lock", r->o.save_dir);
    if (check_ours(fd, what, path, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[256];
        ssize_t n = pread(fd, who, sizeof(who) - 1, 0);
        who[n > 0 ? n : 0] = 0;
        who[strcspn(who, "\n")] = 0;
        close(fd);
        if (e == EWOULDBLOCK)
            return hg_kerr(err, errlen, "--save-dir %s is in use by another hgtrain job "
                           "(%s, %s): let it finish, stop it, or give another --save-dir",
                           r->o.save_dir, who[0] ? who : "holder unknown", path);
        return hg_kerr(err, errlen, "--save-dir %s: cannot lock %s: %s", r->o.save_dir, path,
                       strerror(e));
    }
    char host[256], line[512];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = 0;
    time_t t = time(NULL);
    struct tm tm;
    char when[64] = "";
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    int n = snprintf(line, sizeof(line), "pid %ld on %s since %s\n", (long)getpid(), host,
                     when);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        return hg_kerr(err, errlen, "--save-dir %s: %s: %s", r->o.save_dir, path, strerror(e));
    }
    r->lock_fd = fd;
    return 0;
}

/* The first two numbers in the file name of path (0 when absent). */
static void name_numbers(const char *path, long long v[2])
{
    const char *p = strrchr(path, '/');
    p = p ? p + 1 : path;
    v[0] = v[1] = 0;
    for (int k = 0; k < 2 && *p; k++) {
        while (*p && (*p < '0' || *p > '9'))
            p++;
        char *end;
        v[k] = strtoll(p, &end, 10);
        p = end;
    }
}

/* Keeps the newest `keep` files matching pattern (by name order of their
 * numbers: fairseq's --keep-last-epochs / --keep-interval-updates). */
void hg__run_prune(const struct hg__run *r, const char *pattern, int64_t keep)
{
    if (keep < 0 || r->rank != 0)
        return;
    char pat[4096];
    if (hg__run_ckpt_path(r, pattern, pat, sizeof(pat)) != 0)
        return;
    glob_t gl;
    if (glob(pat, 0, NULL, &gl) != 0)
        return;
    /* oldest first: sort by the (epoch, update) numbers in the names */
    for (size_t i = 1; i < gl.gl_pathc; i++)
        for (size_t j = i; j > 0; j--) {
            long long a[2], b[2];
            name_numbers(gl.gl_pathv[j - 1], a);
            name_numbers(gl.gl_pathv[j], b);
            if (a[0] < b[0] || (a[0] == b[0] && a[1] <= b[1]))
                break;
            char *t = gl.gl_pathv[j - 1];
            gl.gl_pathv[j - 1] = gl.gl_pathv[j];
            gl.gl_pathv[j] = t;
        }
    for (size_t i = 0; i + (size_t)keep < gl.gl_pathc; i++)
        hg_ckpt_remove(gl.gl_pathv[i]); /* and its shards */
    globfree(&gl);
}

/* After a checkpoint failed to load: when it is another task's (two runs
 * in one --save-dir), say so instead of naming a parameter. */
void hg__run_other_task(const struct hg__run *r, const char *path, char *err, size_t errlen)
{
    struct hg_graph *empty = hg_graph_new();
    struct hg_ckpt_meta m;
    memset(&m, 0, sizeof(m));
    char e2[256], task[64] = "";
    if (empty && hg_ckpt_load(path, empty, NULL, 1, &m, e2, sizeof(e2)) == 0 && m.options) {
        const char *t = strstr(m.options, "--task ");
        if (t && sscanf(t + 7, "%63[A-Za-z0-9_.-]", task) != 1)
            task[0] = 0;
    }
    hg_ckpt_meta_free(&m);
    hg_graph_free(empty);
    if (task[0] && strcmp(task, r->task->name) != 0)
        hg_kerr(err, errlen, "%s is a checkpoint of task '%s', but this run is task '%s': "
                "give it its own --save-dir (or --restore-file)", path, task, r->task->name);
}

/* mkdir -p, new directories 0700 (checkpoints are nobody else's) */
static int mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* A save interrupted by SIGKILL or a crash leaves <name>.h5.tmp (or a
 * shard's <name>.h5.<tag>.shard<k>-of-<n>.tmp, or shards that no
 * checkpoint lists); nothing else writes those names, so they go at the
 * next start. */
static void remove_stale_tmp(struct hg__run *r)
{
    static const char *const pats[] = {"*.h5.tmp", "*.h5.*.shard*.tmp", NULL};
    for (const char *const *p = pats; *p; p++) {
        char pat[4096];
        glob_t gl;
        if (hg__run_ckpt_path(r, *p, pat, sizeof(pat)) != 0 || glob(pat, 0, NULL, &gl) != 0)
            continue;
        for (size_t i = 0; i < gl.gl_pathc; i++)
            if (unlink(gl.gl_pathv[i]) == 0) {
                char line[4200];
                snprintf(line, sizeof(line), "| removed %s (left by an interrupted save)\n",
                         gl.gl_pathv[i]);
                hg__run_log(r, line, NULL);
            }
        globfree(&gl);
    }
    /* shards of no checkpoint (a save killed between its shards and its
     * index, or before it removed the old ones) */
    char pat[4096];
    glob_t gl;
    if (hg__run_ckpt_path(r, "*.h5.*.shard*-of-*", pat, sizeof(pat)) != 0 || glob(pat, 0, NULL, &gl) != 0)
        return;
    for (size_t i = 0; i < gl.gl_pathc; i++)
        if (hg_ckpt_orphan_shard(gl.gl_pathv[i]) && unlink(gl.gl_pathv[i]) == 0) {
            char line[4200];
            snprintf(line, sizeof(line), "| removed %s (a shard of no checkpoint)\n",
                     gl.gl_pathv[i]);
            hg__run_log(r, line, NULL);
        }
    globfree(&gl);
}

/* checkpoint_best.h5 on disk bounds what may replace it, whatever the
 * resumed checkpoint says (an old one, --reset-meters, another
 * --restore-file): a metric of another name or direction cannot be
 * compared, so such a file is kept. */
static int best_from_disk(struct hg__run *r, char *cerr, size_t cerrlen)
{
    char path[4096], err[4300];
    if (r->o.no_save || hg__run_ckpt_path(r, "checkpoint_best.h5", path, sizeof(path)) != 0 ||
        access(path, F_OK) != 0)
        return 0;
    if (hg__run_check_loaded(r, path, cerr, cerrlen) != 0)
        return -1;
    struct hg_ckpt_meta m;
    if (hg_ckpt_read_meta(path, &m, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: warning: %s; it is kept, not replaced\n", err);
        r->best_locked = 1;
        return 0;
    }
    const char *name = m.metric_name ? m.metric_name : "";
    if (m.checksummed && (strcmp(name, r->o.best_checkpoint_metric) != 0 ||
                          m.maximize != r->o.maximize_best_checkpoint_metric)) {
        fprintf(stderr, "hgtrain: warning: %s was chosen by '%s' (%s is better), this run "
                "by '%s' (%s): it is kept, not replaced\n", path, name,
                m.maximize ? "higher" : "lower", r->o.best_checkpoint_metric,
                r->o.maximize_best_checkpoint_metric ? "higher" : "lower");
        r->best_locked = 1;
    } else if (!isnan(m.best_metric) &&
               (isnan(r->best) || (r->o.maximize_best_checkpoint_metric ? m.best_metric > r->best
                                                                        : m.best_metric < r->best))) {
        r->best = m.best_metric; /* the file's metric is the bar */
    }
    hg_ckpt_meta_free(&m);
    return 0;
}

/* --plan: SAVE_DIR/strategy.cfg, written to .tmp (O_EXCL | O_NOFOLLOW,
 * file_mode), fsynced, renamed. */
static int write_plan(const struct hg__run *r, char *err, size_t errlen)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->plan_path);
    /* a stale or planted .tmp is removed, never followed */
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        if (unlink(tmp) != 0 && errno != ENOENT)
            break;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode(r));
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return hg_kerr(err, errlen, "--plan: %s: %s", tmp, strerror(errno));
    size_t len = strlen(r->plan_text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, r->plan_text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            close(fd);
            unlink(tmp);
            return hg_kerr(err, errlen, "--plan: %s: write failed: %s", tmp, strerror(e));
        }
        done += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return hg_kerr(err, errlen, "--plan: %s: %s", tmp, strerror(e));
    }
    if (rename(tmp, r->plan_path) != 0) {
        int e = errno;
        unlink(tmp);
        return hg_kerr(err, errlen, "--plan: %s: %s", r->plan_path, strerror(e));
    }
    return 0;
}

/* Rank 0: --save-dir made, locked, cleaned of interrupted saves, and
 * checkpoint_best.h5's metric read; a save dir others can write, or a
 * checkpoint_best.h5 another user owns or others can write, refused
 * without --allow-shared-save-dir. */
int hg__run_prepare_save_dir(struct hg__run *r, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (!o->no_save && mkdir_p(o->save_dir) != 0)
        return hg_kerr(err, errlen, "--save-dir %s: %s", o->save_dir, strerror(errno));
    if (hg__run_check_save_dir(r, err, errlen) != 0)
        return -1;
    if (!o->no_save && access(o->save_dir, W_OK) != 0)
        return hg_kerr(err, errlen, "--save-dir %s: not writable", o->save_dir);
    /* the lock first: another job's .tmp files are not stale */
    if (!o->no_save && lock_save_dir(r, err, errlen) != 0)
        return -1;
    if (!o->no_save)
        remove_stale_tmp(r);
    if (!o->no_save && r->plan_text && write_plan(r, err, errlen) != 0)
        return -1;
    return best_from_disk(r, err, errlen);
}
