/* plugin_bad_abi.c - a task plug-in from a future hgtrain (ABI 999):
 * hg_task_load_plugin must refuse it. Built by make check only. */
#include "tasks/hg_task.h"

static const struct hg_task future_task = {
    .abi_version = 999,
    .name = "future",
};

const struct hg_task *hg_task_plugin(void);
const struct hg_task *hg_task_plugin(void)
{
    return &future_task;
}
