/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal declarations of the CMSIS-Driver Common API, written for tvmdev
 * from the published API reference. Not the Arm headers; link against the
 * real ones in production.
 *
 * The include guard name matches the one used by the real header, so that
 * whichever copy is included first wins and the other is skipped.
 */
#ifndef DRIVER_COMMON_H_
#define DRIVER_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Encodes an API/driver version as 0xMMmm. */
#define ARM_DRIVER_VERSION_MAJOR_MINOR(major, minor) (((major) << 8) | (minor))

typedef struct _ARM_DRIVER_VERSION {
    uint16_t api; /* version of the API the driver implements */
    uint16_t drv; /* version of the driver itself */
} ARM_DRIVER_VERSION;

/* Status codes returned by driver functions (negative = failure). */
#define ARM_DRIVER_OK                  0
#define ARM_DRIVER_ERROR              -1
#define ARM_DRIVER_ERROR_BUSY         -2
#define ARM_DRIVER_ERROR_TIMEOUT      -3
#define ARM_DRIVER_ERROR_UNSUPPORTED  -4
#define ARM_DRIVER_ERROR_PARAMETER    -5
#define ARM_DRIVER_ERROR_SPECIFIC     -6 /* first driver-specific code */

typedef enum _ARM_POWER_STATE {
    ARM_POWER_OFF,
    ARM_POWER_LOW,
    ARM_POWER_FULL
} ARM_POWER_STATE;

#ifdef __cplusplus
}
#endif

#endif /* DRIVER_COMMON_H_ */
