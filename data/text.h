/* text.h - private text helpers of the preprocessing tools: strict UTF-8
 * validation, a line reader that names file:line:column on bad input, a
 * whitespace tokenizer, an interning string table, and text files written
 * atomically (temporary file, fsync, rename). Not installed. */
#ifndef HG_TEXT_H
#define HG_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Strict UTF-8 (RFC 3629): rejects stray continuation bytes, overlong
 * forms, surrogates (U+D800..U+DFFF), code points above U+10FFFF, bytes
 * 0xC0, 0xC1, 0xF5..0xFF and sequences cut short. Returns 0 if s[0..n) is
 * valid; otherwise -1 and *bad_offset (may be NULL) = the offset of the
 * first byte of the first bad sequence. */
int hg_text_validate_utf8(const char *s, size_t n, size_t *bad_offset);

/* Reads lines of a FILE*: strips "\n" or "\r\n" (a lone trailing "\r"
 * too), checks UTF-8 and rejects NUL bytes. */
struct hg_line_reader {
    FILE *f;
    const char *name;  /* for messages */
    char *buf;         /* getline buffer */
    size_t cap;
    int64_t lineno;    /* 1-based number of the last line returned */
};

void hg_line_reader_init(struct hg_line_reader *r, FILE *f, const char *name);
/* 1: *line (NUL-terminated, *len bytes, writable until the next call) is
 * line number r->lineno; 0: end of file; -1: read error or bad text, with
 * a message "name:line:column: ..." (column: 1-based byte offset). */
int hg_line_reader_next(struct hg_line_reader *r, char **line, size_t *len,
                        char *err, size_t errlen);
void hg_line_reader_free(struct hg_line_reader *r);

/* Splits s (NUL-terminated) in place at ASCII whitespace (space, \t, \n,
 * \v, \f, \r): each token becomes NUL-terminated and (*tok)[i] points at
 * it. *tok grows as needed (*cap entries). Returns the number of tokens,
 * or -1 if out of memory. Unicode spaces such as U+00A0 are not split. */
int64_t hg_text_split(char *s, char ***tok, size_t *cap);

/* Byte length of the UTF-8 sequence led by c (1 for a stray byte). */
int hg_utf8_seqlen(unsigned char c);

/* ------------------------------------------------------ string table */

/* Interns byte strings: each distinct string gets a dense id 0, 1, ...
 * Copies are NUL-terminated and never move. */
struct hg_strtab;

struct hg_strtab *hg_strtab_new(void);
void hg_strtab_free(struct hg_strtab *t);
/* The id of s[0..n), added if absent (*added = 1 then; may be NULL);
 * -1 if out of memory. */
int32_t hg_strtab_intern(struct hg_strtab *t, const char *s, size_t n,
                         int *added);
/* The id of s[0..n), or -1. */
int32_t hg_strtab_find(const struct hg_strtab *t, const char *s, size_t n);
const char *hg_strtab_str(const struct hg_strtab *t, int32_t id);
size_t hg_strtab_len(const struct hg_strtab *t, int32_t id);
int32_t hg_strtab_size(const struct hg_strtab *t);

/* ------------------------------------------------------ atomic files */

/* A text file that appears complete or not at all: written to path.tmp,
 * then flushed, fsynced and renamed over path by commit. */
struct hg_atomic_file {
    FILE *f;
    char *tmp;
    char *path;
};

int hg_atomic_open(struct hg_atomic_file *a, const char *path, char *err,
                   size_t errlen);
/* Flushes, fsyncs, closes and renames; on failure removes the temporary. */
int hg_atomic_commit(struct hg_atomic_file *a, char *err, size_t errlen);
/* Closes and removes the temporary file (safe on a zeroed struct). */
void hg_atomic_abort(struct hg_atomic_file *a);

#endif
