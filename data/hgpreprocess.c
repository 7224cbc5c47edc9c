/* hgpreprocess.c - turns raw data into hgtrain shards: IDX images, parallel
 * text for translation (joint BPE + fairseq dictionaries), and BERT-style
 * masked-LM pretraining data in NVIDIA's HDF5 layout. docs/preprocess.md.
 * This file is the program: its usage, the table of commands and main;
 * each command is a file of its own (data/pp-images.c, pp-translation.c,
 * pp-apply-bpe.c, pp-lm.c, pp-batches.c), and what they share is in
 * data/pp-common.c (data/pp-impl.h).
 *
 * Every input is read and checked before the first output is written; a
 * run that fails later removes what it wrote (shards go through the shard
 * writer's temp + rename, text files through temp + fsync + rename), so a
 * failed run leaves no partial output. Exit: 0 ok, 1 error, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/pp-impl.h"

static const char usage_text[] =
    "usage: hgpreprocess images --images F --labels F --out DIR [--num-shards K]\n"
    "           [--prefix NAME]\n"
    "       hgpreprocess images --fashion-mnist DIR [--out DIR] [--num-shards K]\n"
    "       hgpreprocess translation --source-lang S --target-lang T --trainpref P\n"
    "           --validpref P [--testpref P] --destdir DIR\n"
    "           (--bpe-merges N | --bpe-codes FILE)\n"
    "           [--num-shards K] [--max-len L] [--min-frequency N] [--thresholdsrc N]\n"
    "           [--thresholdtgt N] [--nwordssrc N] [--nwordstgt N]\n"
    "           [--joined-dictionary] [--srcdict FILE] [--tgtdict FILE]\n"
    "           (with --bpe-codes and both dictionaries, any of the three prefixes)\n"
    "       hgpreprocess apply-bpe --codes FILE [--input F|-] [--output F]\n"
    "       hgpreprocess lm --input F --destdir DIR\n"
    "           (--bpe-merges N | --bpe-codes FILE)\n"
    "           [--max-seq-len 128] [--max-predictions 20] [--masked-lm-prob 0.15]\n"
    "           [--short-seq-prob 0.1] [--dupe-factor 1] [--seed S] [--num-shards K]\n"
    "           [--min-frequency N]\n"
    "       hgpreprocess batches --data SPEC [--layout translation|images|lm]\n"
    "           (--max-tokens N | --max-sentences N | --batch-size N)\n"
    "           [--required-batch-size-multiple M] [--rank-capacity C0,C1,...]\n"
    "           [--seed S] [--epoch E] [--valid]\n"
    "           (how an epoch of shards SPEC is cut into per-rank batches)\n";

/* The commands, each an entry of its own file (tmux's cmd_table): its
 * options struct, table and run function. */
static const struct pp_command *const commands[] = {
    &hg__pp_images, &hg__pp_translation, &hg__pp_lm, &hg__pp_batches, &hg__pp_apply_bpe,
};

static int usage_error(const char *cmd, const char *fmt, const char *what)
{
    return hg__pp_usage_error(usage_text, cmd, fmt, what);
}

/* What every command takes besides its own options. */
struct common_opts {
    int help;
};

static const struct hg_opt common_opts[] = {
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .group = 1,
     .offset = offsetof(struct common_opts, help), .help = "show this help and exit"},
};

/* Parses argv[2..] into the command's options and runs it: its exit status. */
static int run_command(const struct pp_command *c, int argc, char **argv)
{
    void *opts = calloc(1, c->size);
    unsigned char *given = calloc((size_t)c->nopts, 1);
    if (!opts || !given) {
        free(opts);
        free(given);
        fprintf(stderr, "hgpreprocess: out of memory\n");
        return 1;
    }
    char title[64];
    snprintf(title, sizeof(title), "hgpreprocess %s options", c->name);
    const char *const groups[] = {title, "other", NULL};
    struct common_opts co = {0};
    const struct hg_opt_prog p = {
        .usage = usage_text,
        .groups = groups,
        .sets = {{.opts = c->opts, .n = c->nopts, .base = opts, .given = given},
                 {.opts = common_opts, .n = NOPTS(common_opts), .base = &co}},
        .nsets = 2,
    };
    char err[ERRLEN];
    int rc;
    if (hg_opt_parse(&p, argc - 1, argv + 1, err, sizeof(err)) != 0)
        rc = usage_error(c->name, "%s", err);
    else if (co.help)
        rc = (hg_opt_help(stdout, &p), 0);
    else
        rc = c->run(opts, &p);
    hg_opt_free(&p);
    free(opts);
    free(given);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error(NULL, "%s", "a command is required");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        hg_print_version("hgpreprocess");
        return 0;
    }
    const char *names[NOPTS(commands) + 1];
    for (int i = 0; i < NOPTS(commands); i++) {
        if (strcmp(cmd, commands[i]->name) == 0)
            return run_command(commands[i], argc, argv);
        names[i] = commands[i]->name;
    }
    names[NOPTS(commands)] = NULL;
    char hint[96], fmt[160];
    snprintf(fmt, sizeof(fmt), "unknown command '%%s'%s",
             hg_suggest_text(cmd, names, "", hint, sizeof(hint)));
    return usage_error(NULL, fmt, cmd);
}
