/* pending.c - placeholders until the nccl and mpi backends land (each fails with a message). */
#include "comm/hg_comm.h"
#include "kernels/hg_kernels.h"

#define PENDING(what) hg_kerr(err, errlen, "%s: not built yet", what)

int hg_comm_have_nccl(void) { return 0; }
int hg_comm_nccl_new(struct hg_comm **c, struct hg_store *st, int rank, int world,
                     double timeout_s, char *err, size_t errlen)
{ (void)c, (void)st, (void)rank, (void)world, (void)timeout_s; return PENDING("nccl"); }
int hg_comm_have_mpi(void) { return 0; }
int hg_comm_mpi_new(struct hg_comm **c, char *err, size_t errlen)
{ (void)c; return PENDING("mpi"); }
