/* comm.c - hg_comm.h's calls dispatched to the handle's backend, with the
 * argument checks every backend would otherwise repeat. */
#include "base/hg_base.h"
#include "comm/comm-impl.h"

#include <assert.h>

int hg_comm_rank(const struct hg_comm *c) { return c->rank; }
int hg_comm_world(const struct hg_comm *c) { return c->world; }
const char *hg_comm_backend(const struct hg_comm *c) { return c->ops->name; }

int hg_comm_allreduce_f32(struct hg_comm *c, float *buf, size_t n, char *err,
                          size_t errlen)
{
    assert(c && (buf || n == 0));
    return c->ops->allreduce(c, buf, n, HG_COMM_F32, err, errlen);
}

int hg_comm_allreduce_f64(struct hg_comm *c, double *buf, size_t n, char *err,
                          size_t errlen)
{
    assert(c && (buf || n == 0));
    return c->ops->allreduce(c, buf, n, HG_COMM_F64, err, errlen);
}

int hg_comm_broadcast(struct hg_comm *c, void *buf, size_t bytes, int root,
                      char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (root < 0 || root >= c->world) {
        hg_kerr(err, errlen, "%s: rank %d: broadcast root %d outside 0..%d",
                c->ops->name, c->rank, root, c->world - 1);
        hg_comm_abort(c);
        return -1;
    }
    return c->ops->broadcast(c, buf, bytes, root, err, errlen);
}

int hg_comm_allgather(struct hg_comm *c, const void *send, void *recv,
                      size_t bytes, char *err, size_t errlen)
{
    assert(c && ((send && recv) || bytes == 0));
    return c->ops->allgather(c, send, recv, bytes, err, errlen);
}

int hg_comm_barrier(struct hg_comm *c, char *err, size_t errlen)
{
    assert(c);
    return c->ops->barrier(c, err, errlen);
}

static int bad_peer(struct hg_comm *c, int peer, const char *what, char *err,
                    size_t errlen)
{
    if (peer >= 0 && peer < c->world && peer != c->rank)
        return 0;
    hg_kerr(err, errlen, "%s: rank %d: %s peer %d is not another rank of 0..%d",
            c->ops->name, c->rank, what, peer, c->world - 1);
    hg_comm_abort(c);
    return -1;
}

int hg_comm_send(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                 char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (bad_peer(c, peer, "send", err, errlen) != 0)
        return -1;
    return c->ops->send(c, buf, bytes, peer, err, errlen);
}

int hg_comm_recv(struct hg_comm *c, void *buf, size_t bytes, int peer,
                 char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (bad_peer(c, peer, "recv", err, errlen) != 0)
        return -1;
    return c->ops->recv(c, buf, bytes, peer, err, errlen);
}

void hg_comm_abort(struct hg_comm *c)
{
    if (c)
        c->ops->abort(c);
}

void hg_comm_free(struct hg_comm *c)
{
    if (c)
        c->ops->free(c);
}
