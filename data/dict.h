/* dict.h - a fairseq-style dictionary: the preprocessing tools, the
 * tasks and generation use it, and so may a task plug-in (installed as
 * $prefix/include/hgtrain/data/dict.h). File format: docs/preprocess.md. */
#ifndef HG_DICT_H
#define HG_DICT_H

#include <stddef.h>
#include <stdint.h>

/* fairseq's Dictionary: <s>=0, <pad>=1, </s>=2, <unk>=3, then any extra
 * specials in the order given (e.g. [CLS] [SEP] [MASK] = 4, 5, 6), then the
 * symbols by decreasing count, ties in byte order. */
#define HG_DICT_BOS 0
#define HG_DICT_PAD 1
#define HG_DICT_EOS 2
#define HG_DICT_UNK 3

struct hg_dict;

struct hg_dict *hg_dict_new(const char *const *extra_specials, int nextra);
void hg_dict_free(struct hg_dict *d);
/* Counts count more occurrences of sym[0..n) (before finalize). Returns
 * its provisional id or -1 (no memory). */
int32_t hg_dict_add(struct hg_dict *d, const char *sym, size_t n,
                    int64_t count);
/* Orders the symbols; keeps those with count >= threshold (threshold <= 0:
 * all) and at most nwords of them (nwords < 0: all). After this, ids are
 * final and hg_dict_add may not be called. */
int hg_dict_finalize(struct hg_dict *d, int64_t threshold, int64_t nwords);
/* Final id of sym[0..n); unknown -> HG_DICT_UNK. */
int32_t hg_dict_index(const struct hg_dict *d, const char *sym, size_t n);
int32_t hg_dict_size(const struct hg_dict *d);
int32_t hg_dict_nspecial(const struct hg_dict *d);
const char *hg_dict_symbol(const struct hg_dict *d, int32_t id);
int64_t hg_dict_count(const struct hg_dict *d, int32_t id);
/* "symbol count" per line, specials first, so that line i (0-based) is
 * id i. Written atomically. */
int hg_dict_save(const struct hg_dict *d, const char *path, char *err,
                 size_t errlen);
/* Reads a file written by hg_dict_save, or a fairseq dict.txt (no special
 * lines: they are added in front). Lines may end in " #fairseq:overwrite"
 * (ignored). extra_specials as for hg_dict_new. */
int hg_dict_load(struct hg_dict **out, const char *path,
                 const char *const *extra_specials, int nextra, char *err,
                 size_t errlen);

#endif
