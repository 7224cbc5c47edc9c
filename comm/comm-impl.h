/* comm-impl.h - what a backend of hg_comm.h provides: a table of
 * operations behind a handle whose first member is struct hg_comm. */
#ifndef HG_COMM_IMPL_H
#define HG_COMM_IMPL_H

#include "comm/hg_comm.h"

enum hg_comm_dtype { HG_COMM_F32, HG_COMM_F64 };

struct hg_comm_ops {
    const char *name;
    int (*allreduce)(struct hg_comm *c, void *buf, size_t n,
                     enum hg_comm_dtype dt, char *err, size_t errlen);
    int (*broadcast)(struct hg_comm *c, void *buf, size_t bytes, int root,
                     char *err, size_t errlen);
    int (*allgather)(struct hg_comm *c, const void *send, void *recv,
                     size_t bytes, char *err, size_t errlen);
    int (*barrier)(struct hg_comm *c, char *err, size_t errlen);
    int (*send)(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                char *err, size_t errlen);
    int (*recv)(struct hg_comm *c, void *buf, size_t bytes, int peer,
                char *err, size_t errlen);
    void (*abort)(struct hg_comm *c);
    void (*free)(struct hg_comm *c);
};

/* The first member of every backend's handle. */
struct hg_comm {
    const struct hg_comm_ops *ops;
    int rank, world;
};

#endif
