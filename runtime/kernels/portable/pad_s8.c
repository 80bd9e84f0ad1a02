/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 PAD / PADV2 (tvmk_s8_ops.h: tvmk_pad_s8_params): the
 * output in row-major order, each element the input's at (index - begin) when inside it,
 * else value, by rows (the body of moves_int.h). output must not overlap data.
 */
#include "moves_int.h"

TVMK_PAD_INT(tvmk_pad_s8, int8_t, -128, 127)
