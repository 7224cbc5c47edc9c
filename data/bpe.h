/* bpe.h - byte-pair encoding as subword-nmt does it (Sennrich et al. 2016),
 * Private to the preprocessing tools.
 *
 * Learning: words (whitespace-separated tokens) are split into characters
 * (Unicode code points), the last one carrying the end-of-word marker
 * "</w>" ("low" -> l o w</w>, subword-nmt's codes format 0.2). Each merge
 * joins the most frequent adjacent pair, counted over word frequencies.
 * Ties: the pair (a, b) that is greatest in byte order, comparing a first
 * then b - exactly subword-nmt's max(stats, key=(count, pair)). Learning
 * stops early when the best pair occurs fewer than min_freq times
 * (subword-nmt: --min-frequency, default 2).
 *
 * Applying: a word is split the same way, then the adjacent pair with the
 * lowest merge rank is merged (every occurrence, left to right) until no
 * pair has a rank. The end marker is dropped and every subword but the
 * last gets the "@@" suffix ("lowest" -> "low@@ est"). */
#ifndef HG_BPE_H
#define HG_BPE_H

#include <stddef.h>
#include <stdint.h>

/* Word frequencies to learn from. */
struct hg_bpe_vocab;

struct hg_bpe_vocab *hg_bpe_vocab_new(void);
void hg_bpe_vocab_free(struct hg_bpe_vocab *v);
/* Adds count occurrences of word[0..len) (valid UTF-8, no whitespace). */
int hg_bpe_vocab_add(struct hg_bpe_vocab *v, const char *word, size_t len,
                     int64_t count);
int64_t hg_bpe_vocab_size(const struct hg_bpe_vocab *v);

/* Merge codes plus the segmentation cache. */
struct hg_bpe;

/* Learns up to nmerges merges. progress (may be NULL) is called every 100
 * merges with the number done. */
int hg_bpe_learn(struct hg_bpe **out, const struct hg_bpe_vocab *v,
                 int nmerges, int64_t min_freq,
                 void (*progress)(int done, int total), char *err,
                 size_t errlen);
/* Reads a subword-nmt codes file ("#version: 0.2" then "a b" lines; a
 * file without the version line is read as version 0.2 too). */
int hg_bpe_load(struct hg_bpe **out, const char *path, char *err,
                size_t errlen);
/* Writes the codes file atomically (path.tmp, fsync, rename). */
int hg_bpe_save(const struct hg_bpe *b, const char *path, char *err,
                size_t errlen);
void hg_bpe_free(struct hg_bpe *b);

int hg_bpe_nmerges(const struct hg_bpe *b);
/* Merge i (0-based rank): its two symbols, "</w>" included. */
void hg_bpe_merge(const struct hg_bpe *b, int i, const char **first,
                  const char **second);

/* Segments word[0..len) (valid UTF-8, no whitespace, len > 0) into subword
 * tokens: *tok = token ids (see hg_bpe_token), valid until the next call.
 * Results are cached per word. Returns the token count or -1 (no memory). */
int hg_bpe_segment(struct hg_bpe *b, const char *word, size_t len,
                   const int32_t **tok);
/* The text of a token id ("low@@", "est"). */
const char *hg_bpe_token(const struct hg_bpe *b, int32_t id);
size_t hg_bpe_token_len(const struct hg_bpe *b, int32_t id);
/* Number of distinct token ids handed out so far. */
int32_t hg_bpe_ntokens(const struct hg_bpe *b);

#endif
