/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: fused activations (TVMK_ACT_*), applied to each output value
 * by the kernels whose params carry an activation. Private to this folder.
 */
#ifndef TVMK_PORTABLE_ACTIVATION_H_
#define TVMK_PORTABLE_ACTIVATION_H_

#include <math.h>

#include "tvmk_portable.h"

/* 1 when act is a known activation code. */
static inline int tvmk_act_valid(int32_t act)
{
    return act >= TVMK_ACT_NONE && act <= TVMK_ACT_TANH;
}

static inline float tvmk_act_clamp(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

static inline float tvmk_activate(int32_t act, float v)
{
    switch (act) {
    case TVMK_ACT_RELU:
        return v < 0.0f ? 0.0f : v;
    case TVMK_ACT_RELU6:
        return tvmk_act_clamp(v, 0.0f, 6.0f);
    case TVMK_ACT_RELU_N1_TO_1:
        return tvmk_act_clamp(v, -1.0f, 1.0f);
    case TVMK_ACT_TANH:
        return tanhf(v);
    default:
        return v;
    }
}

#endif /* TVMK_PORTABLE_ACTIVATION_H_ */
