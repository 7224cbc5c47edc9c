/* pending.c - placeholders until the store, tcp, nccl and mpi backends
 * land (each fails with a message). */
#include "comm/hg_comm.h"
#include "kernels/hg_kernels.h"

#define PENDING(what) hg_kerr(err, errlen, "%s: not built yet", what)

int hg_store_token_new(char token[HG_STORE_TOKEN_LEN + 1], char *err, size_t errlen)
{ (void)token; return PENDING("store"); }
int hg_store_token_load(char token[HG_STORE_TOKEN_LEN + 1], const char *path, char *err,
                        size_t errlen)
{ (void)token, (void)path; return PENDING("store"); }
int hg_store_server_start(struct hg_store_server **s, const char *host, int port,
                          const char *token, int world, char *err, size_t errlen)
{ (void)s, (void)host, (void)port, (void)token, (void)world; return PENDING("store"); }
int hg_store_server_port(const struct hg_store_server *s) { (void)s; return 0; }
void hg_store_server_stop(struct hg_store_server *s) { (void)s; }
int hg_store_connect(struct hg_store **st, const char *host, int port, const char *token,
                     int rank, double timeout_s, char *err, size_t errlen)
{ (void)st, (void)host, (void)port, (void)token, (void)rank, (void)timeout_s; return PENDING("store"); }
void hg_store_close(struct hg_store *st) { (void)st; }
int hg_store_barrier(struct hg_store *st, const char *name, int world, char *err,
                     size_t errlen)
{ (void)st, (void)name, (void)world; return PENDING("store"); }
int hg_comm_tcp_new(struct hg_comm **c, struct hg_store *st, int rank, int world,
                    double timeout_s, char *err, size_t errlen)
{ (void)c, (void)st, (void)rank, (void)world, (void)timeout_s; return PENDING("tcp"); }
int hg_comm_have_nccl(void) { return 0; }
int hg_comm_nccl_new(struct hg_comm **c, struct hg_store *st, int rank, int world,
                     double timeout_s, char *err, size_t errlen)
{ (void)c, (void)st, (void)rank, (void)world, (void)timeout_s; return PENDING("nccl"); }
int hg_comm_have_mpi(void) { return 0; }
int hg_comm_mpi_new(struct hg_comm **c, char *err, size_t errlen)
{ (void)c; return PENDING("mpi"); }
