/* store-impl.h - the rendezvous store's internals shared with the tcp
 * backend and the tests: the frame format (comm/store.c documents the
 * protocol), its parser, and accessors to a client handle. */
#ifndef HG_STORE_IMPL_H
#define HG_STORE_IMPL_H

#include "comm/hg_comm.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define HG_STORE_MAGIC 0x54534748u /* "HGST" little-endian */
#define HG_STORE_HDR_LEN 16
/* The server keeps an ABORT's message (at most HG_STORE_ABORT_MAX bytes)
 * under this key (a CHECK tells whether the job has failed). */
#define HG_STORE_ABORT_KEY "hg/abort"
/* The text an ERR reply to a GET starts with once the job has failed. */
#define HG_STORE_FAILED "the job failed: "

enum hg_store_op {
    /* client -> server */
    HG_STORE_HELLO = 1, /* key: token, value: i32 rank */
    HG_STORE_SET = 2,   /* key, value */
    HG_STORE_GET = 3,   /* key; the reply waits until the key exists */
    HG_STORE_ADD = 4,   /* key, value: i64 delta */
    HG_STORE_CHECK = 5, /* key; answers at once whether it exists */
    HG_STORE_CLAIM = 6, /* key, value: set the key only if it is absent */
    HG_STORE_ABORT = 7, /* no key, value: why the job failed */
    /* server -> client */
    HG_STORE_OK = 16,    /* empty */
    HG_STORE_VALUE = 17, /* value (ADD: i64; CHECK: one byte 0/1; CLAIM:
                            one byte 0 = claimed / 1 = held, + the holder's value) */
    HG_STORE_ERR = 18,   /* value: a message (text, no NUL) */
};

struct hg_store_hdr {
    uint32_t magic;
    uint8_t op, flags;
    uint16_t reserved;
    uint32_t klen, vlen;
};

/* Parses the first HG_STORE_HDR_LEN bytes of b.  Returns 0 when len is too
 * short yet, HG_STORE_HDR_LEN when the header is valid (magic, a known op,
 * zero flags/reserved, lengths within the limits and the op's shape), -1
 * with a message (no payload bytes quoted) when it is not. */
int hg_store_parse_header(const unsigned char *b, size_t len,
                          struct hg_store_hdr *h, char *err, size_t errlen);
/* Writes a header into b[HG_STORE_HDR_LEN]. */
void hg_store_put_header(unsigned char *b, enum hg_store_op op, uint32_t klen,
                         uint32_t vlen);

/* 1 when the two tokens are equal (time independent of where they
 * differ), else 0. */
int hg_store_token_equal(const char *a, const char *b);

/* The job token this handle connected with (the tcp backend's hello). */
const char *hg_store_token_of(const struct hg_store *st);
/* The local address of the connection to the store: the interface that
 * reaches rank 0's host. */
int hg_store_local_addr(struct hg_store *st, struct sockaddr_storage *ss,
                        socklen_t *sslen, char *err, size_t errlen);
int hg_store_rank_of(const struct hg_store *st);

/* Connections the server has closed for a protocol or token error (tests). */
unsigned long hg_store_server_rejected(const struct hg_store_server *s);

#endif
