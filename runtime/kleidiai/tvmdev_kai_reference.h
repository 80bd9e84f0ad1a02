/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's reference micro-kernels: three families with KleidiAI's interface and naive
 * bodies, with the geometries of the real ones (a plain LHS with 6 x 8 tiles like the
 * NEON kernel; packed LHS and RHS with square tiles like the SME ones, at a simulated
 * vector length), each with its own packed layout reached only through its getters.
 */
#ifndef TVMDEV_KAI_REFERENCE_H_
#define TVMDEV_KAI_REFERENCE_H_

#include "tvmdev_kai.h"

extern const struct tvmdev_kai_f32_ukernel tvmdev_kai_reference_sme2;
extern const struct tvmdev_kai_f32_ukernel tvmdev_kai_reference_sme;
extern const struct tvmdev_kai_f32_ukernel tvmdev_kai_reference_neon;
extern const struct tvmdev_kai_q4_ukernel tvmdev_kai_reference_q4_i8mm;
extern const struct tvmdev_kai_q4_ukernel tvmdev_kai_reference_q4_dotprod;

#endif /* TVMDEV_KAI_REFERENCE_H_ */
