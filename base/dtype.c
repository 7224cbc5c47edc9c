/* dtype.c - element types: sizes and names (base/hg_base.h). */
#include "base/hg_base.h"

size_t hg_dtype_size(enum hg_dtype dt)
{
    switch (dt) {
    case HG_F32: return 4;
    case HG_I32: return 4;
    case HG_I64: return 8;
    case HG_F16: return 2;
    case HG_BF16: return 2;
    case HG_U8: return 1;
    case HG_I8: return 1;
    default: break;
    }
    HG_CHECK(!"bad dtype");
}

const char *hg_dtype_name(enum hg_dtype dt)
{
    switch (dt) {
    case HG_F32: return "f32";
    case HG_I32: return "i32";
    case HG_I64: return "i64";
    case HG_F16: return "f16";
    case HG_BF16: return "bf16";
    case HG_U8: return "u8";
    case HG_I8: return "i8";
    default: return "?";
    }
}
