/* hg_base.h - the base room: what every room shares and nothing numeric
 * (docs/architecture.md). Every room may include it; it includes nothing of
 * ours. One file per concern: check.c (programmer errors, runtime error
 * messages), dtype.c, rand.c (the counter-based RNG), clock.c, opts.c (the
 * option parser of every program), suggest.c (did-you-mean, --version). */
#ifndef HG_BASE_H
#define HG_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Functions both the host and CUDA device code compile (the RNG below,
 * kernels/ew-math.h). */
#ifdef __CUDACC__
#define HG_HD __host__ __device__
#else
#define HG_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ check.c */

/* Programmer errors: abort with file:line. Runtime errors return -1. */
#define HG_CHECK(cond)                                                        \
    do {                                                                      \
        if (!(cond))                                                          \
            hg_check_failed(__FILE__, __LINE__, #cond);                       \
    } while (0)
#ifdef __cplusplus
[[noreturn]] void hg_check_failed(const char *file, int line, const char *expr);
#else
_Noreturn void hg_check_failed(const char *file, int line, const char *expr);
#endif

/* Formats a runtime error into err[errlen] (err may be NULL) and returns
 * -1: `return hg_kerr(err, errlen, "%s: ...", path);`. Every room uses it
 * (the name is older than this room). */
int hg_kerr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------ dtype.c */

/* Element types of tensors, shards and messages. */
enum hg_dtype {
    HG_F32,
    HG_I32,
    HG_I64,
    HG_F16,  /* reserved: storage only for now */
    HG_BF16, /* reserved: storage only for now */
    HG_U8,   /* storage: images in data shards */
    HG_I8,   /* storage: masks and segment ids (NVIDIA BERT shards) */
    HG_DTYPE_COUNT
};
size_t hg_dtype_size(enum hg_dtype dt);
const char *hg_dtype_name(enum hg_dtype dt); /* "f32", ...; "?" if out of range */

/* ------------------------------------------------------------- rand.c */

/* Counter-based RNG (dropout masks on CPU and CUDA, batch shuffling):
 * uniform in [0,1), a pure function of (seed, stream, index).
 * hg_rand_uniform(seed, stream, i) == hg_rand_u(hg_rand_key(seed, stream), i);
 * kernels hoist the key out of their loops. Formula in base/rand.c. */
float hg_rand_uniform(uint64_t seed, uint64_t stream, uint64_t index);

HG_HD static inline uint64_t hg_mix64(uint64_t z) /* splitmix64's finaliser */
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

HG_HD static inline uint64_t hg_rand_key(uint64_t seed, uint64_t stream)
{
    return hg_mix64(seed ^ hg_mix64(stream + 0x9E3779B97F4A7C15ULL));
}

HG_HD static inline float hg_rand_u(uint64_t key, uint64_t index)
{
    uint64_t h = hg_mix64(key + (index + 1) * 0x9E3779B97F4A7C15ULL);
    return (float)(h >> 40) * (1.0f / 16777216.0f);
}

/* ------------------------------------------------------------ clock.c */

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for durations and
 * deadlines, never for dates. */
double hg_now(void);
struct timespec;
/* *ts = now + sec on the monotonic clock: the deadline of a
 * pthread_cond_timedwait on a condition variable whose clock is set to
 * CLOCK_MONOTONIC (pthread_condattr_setclock). */
void hg_deadline_ts(struct timespec *ts, double sec);

/* ---------------------------------------------------------- suggest.c */

/* The closest of a set of names to a mistyped word: feed every candidate
 * to hg_suggest_add, then hg_suggest_best gives the nearest one by edit
 * distance (insert, delete, replace, swap of neighbours), or NULL when
 * none is within max(1, strlen(word) / 3) edits. Ties: the first fed. */
struct hg_suggest {
    const char *word;
    const char *best; /* NULL: none yet */
    size_t dist;      /* best's distance */
};

void hg_suggest_init(struct hg_suggest *s, const char *word);
void hg_suggest_add(struct hg_suggest *s, const char *cand);
const char *hg_suggest_best(const struct hg_suggest *s);

/* " (did you mean --NAME?)" for word among the NULL-terminated names
 * (prefix "--", "" for commands and keys), or "" when none is close;
 * into out[len], which is returned. */
const char *hg_suggest_text(const char *word, const char *const *names, const char *prefix,
                            char *out, size_t len);

/* The program's version line: "NAME (hgtrain) VERSION" on stdout. */
void hg_print_version(const char *program);

/* ------------------------------------------------------------- opts.c */

/* One option parser for every program. A program declares its options
 * once, as a table of designated-initializer rows (struct hg_opt), each
 * naming a field of the program's own options struct by offset; the
 * table drives the command line (--name VALUE, --name=VALUE, -c FILE,
 * -cFILE, --no-name), the libconfig file (keys: the names, '-' or '_'),
 * --help, did-you-mean suggestions and the text form (hg_opt_to_string).
 * Every error names the option (or file:line and key) and the value. */

enum hg_opt_type {
    HG_OPT_INT,     /* int */
    HG_OPT_I64,     /* int64_t */
    HG_OPT_REAL,    /* double (finite) */
    HG_OPT_STR,     /* char *: a malloc'ed copy; NULL: not given, no default */
    HG_OPT_BOOL,    /* int 0/1: a switch, takes no value */
    HG_OPT_ENUM,    /* int: the index of the value in .choices */
    HG_OPT_LIST,    /* struct hg_opt_list: "2,1,1", "(0.9, 0.98)", "[1,2]" */
    HG_OPT_IGNORED, /* no field: accepted (also as --name=VALUE) and ignored */
};

enum {
    HG_OPTF_NOSAVE = 1 << 0,    /* left out by hg_opt_to_string (job, not model) */
    HG_OPTF_NOCONFIG = 1 << 1,  /* refused in a config file */
    HG_OPTF_NEGATABLE = 1 << 2, /* BOOL: --no-NAME sets 0 */
    HG_OPTF_SWITCH = 1 << 3,    /* STR: --NAME alone is "1", --NAME=V is V;
                                 * written as --NAME when "1", left out when "0" */
    HG_OPTF_WHOLE = 1 << 4,     /* REAL and LIST: whole numbers only */
    HG_OPTF_POSITIVE = 1 << 5,  /* numbers (list elements) must be > 0 */
    HG_OPTF_CONFIG = 1 << 6,    /* STR: a libconfig file of further options, read
                                 * after the defaults, before the command line */
};

/* A list of numbers: v[n], malloc'ed (NULL when n == 0). */
struct hg_opt_list {
    int n;
    double *v;
};

struct hg_opt {
    const char *name;       /* without "--" */
    const char *alias;      /* another name, or NULL */
    char short_name;        /* -c, or 0 */
    enum hg_opt_type type;
    int group;              /* index into hg_opt_prog.groups (--help sections) */
    size_t offset;          /* offsetof(struct program_opts, field) */
    const char *def;        /* default as command-line text; NULL: none (the
                             * field keeps what the caller put there) */
    const char *choices;    /* "a|b|c": the values of a STR (checked) or ENUM */
    /* Numbers (INT, I64, REAL and list elements) below min are refused;
     * min is 0 unless set, so negative values need .min (-HUGE_VAL: no
     * bound). max: an upper bound when max > min, none when 0. */
    double min, max;
    int min_count, max_count; /* LIST lengths (max_count 0: any) */
    const char *empty;      /* LIST: a word that stands for the empty list */
    unsigned flags;         /* HG_OPTF_* */
    const char *metavar;    /* --help's name of the value; NULL: from the type */
    const char *help;
    /* Optional: further checks of a value just stored in *field; where is
     * "--name" or "FILE:LINE: key 'k'". Returns 0 or -1 with err. */
    int (*check)(const void *field, const char *where, char *err, size_t errlen);
};

/* One table and the struct its offsets point into. given (may be NULL):
 * n flags, set to 1 for each row the command line or the config file set. */
struct hg_opt_set {
    const struct hg_opt *opts;
    int n;
    void *base;
    unsigned char *given;
};

/* An option the program refuses by name, with what to do instead
 * (fairseq's options that do not apply, say). */
struct hg_opt_refusal {
    const char *name, *why;
};

#define HG_OPT_MAXSETS 4

/* A program's options: its tables (a task's options can be a second one)
 * and the words around them. */
struct hg_opt_prog {
    const char *usage;                    /* --help's first lines, or NULL */
    const char *const *groups;            /* section titles by hg_opt.group,
                                           * NULL-terminated */
    const struct hg_opt_refusal *refused; /* {NULL}-terminated, or NULL */
    const char *refused_what;             /* "a fairseq option that does not
                                           * apply to hgtrain" */
    const char *unknown_note;             /* appended to "unknown option", or NULL */
    struct hg_opt_set sets[HG_OPT_MAXSETS];
    int nsets;
};

/* Parses argv[1..argc) (argv[0] is the program or command): every row's
 * default, then the config file (a HG_OPTF_CONFIG row on the command
 * line), then the command line in order (the later of two wins). Errors
 * (unknown options with a suggestion, missing values, stray arguments)
 * are found before any value is stored. Values are checked as they are
 * stored (type, range, choices, list length, .check). Strings and lists
 * already in the fields are freed when replaced: zero the struct first.
 * Returns 0, or -1 with err (a usage error). */
int hg_opt_parse(const struct hg_opt_prog *p, int argc, char **argv, char *err,
                 size_t errlen);

/* The value of option name on the command line (the last one), else its
 * key in the config file, without reporting errors: unknown options are
 * assumed to take a value. A malloc'ed copy, or NULL. For options that
 * decide which other options exist (hgtrain's --task). */
char *hg_opt_peek(const struct hg_opt_prog *p, int argc, char **argv, const char *name);

/* 1 if the command line or config file set option name, 0 if not, -1 if
 * no table tracks it (given == NULL) or it does not exist. */
int hg_opt_given(const struct hg_opt_prog *p, const char *name);

/* usage, then one section per group: every row with its names, value,
 * help text, choices and default ("(none)" for an empty section), wrapped
 * at spaces to the terminal's width when f is a terminal, else to 80
 * columns. */
void hg_opt_help(FILE *f, const struct hg_opt_prog *p);

/* The options as "--name value ..." (rows without HG_OPTF_NOSAVE; unset
 * strings left out, switches only where they differ from their default;
 * values shell-quoted where needed),
 * which hg_opt_parse reads back to the same values. malloc'ed; NULL when
 * out of memory. */
char *hg_opt_to_string(const struct hg_opt_prog *p);

/* Frees the strings and lists of every table and zeroes those fields. */
void hg_opt_free(const struct hg_opt_prog *p);

/* libconfig's config_read_file for every libconfig file we read (the -c
 * config file, cluster, profile and strategy files): the same result and
 * error state (config_error_type/_line/_text; CONFIG_ERR_FILE_IO when it
 * cannot be read), in time linear in the file's size.  libconfig's own
 * reader rescans a token from its start at every 8 KiB it reads, so a line
 * of L bytes took O(L^2) (a 4 MiB comment line: 10-25 s); this one reads
 * the file whole and parses it as one string.  A NUL byte (where
 * config_read_string would silently stop) is a parse error at its line;
 * files over HG_CONFIG_MAX_BYTES are refused.  CONFIG_TRUE or
 * CONFIG_FALSE. */
#define HG_CONFIG_MAX_BYTES ((size_t)256 << 20)
struct config_t;
int hg_config_read_file(struct config_t *cfg, const char *path);

#ifdef __cplusplus
}
#endif

#endif
