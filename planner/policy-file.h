/* policy-file.h - the learned policy's file (planner/policy_file.c), for
 * hgplan and test_policy: HDF5 through the data room's helpers, so it is
 * compiled into them and not into the library (docs/planner.md, "Learned
 * policy"). */
#ifndef HG_POLICY_FILE_H
#define HG_POLICY_FILE_H

#include <stddef.h>

#include "planner/hg_planner.h"

/* Weights, AdamW state and step count; layout version and dimensions as
 * attributes.  Written to path.tmp, renamed over path.  -1 with err naming
 * path and the tensor, nothing written, where a tensor holds what
 * hg_policy_load refuses (a value not finite, a weight beyond 1e6). */
int hg_policy_save(const struct hg_policy *p, const char *path, char *err, size_t errlen);
/* -1 with err naming path: not an HDF5 file, not a policy, another feature
 * layout or dimensions, a missing or mis-shaped tensor, a CRC mismatch, a
 * tensor with a value not finite, a weight beyond +-1e6 or a negative
 * exp_avg_sq (named, with the element). */
int hg_policy_load(struct hg_policy **p, const char *path, char *err, size_t errlen);

#endif
