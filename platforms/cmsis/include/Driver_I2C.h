/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal declarations of the CMSIS-Driver I2C API, written for tvmdev
 * from the published API reference. Not the Arm headers; link against the
 * real ones in production.
 *
 * Bit-fields are declared as unsigned int (same 32-bit layout as the
 * reference) so that the header stays clean under -std=c99 -pedantic.
 */
#ifndef DRIVER_I2C_H_
#define DRIVER_I2C_H_

#include <stdbool.h>
#include <stdint.h>

#include "Driver_Common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARM_I2C_API_VERSION ARM_DRIVER_VERSION_MAJOR_MINOR(2, 4)

/* Control operations (argument "control" of Control()) */
#define ARM_I2C_OWN_ADDRESS          (0x01UL) /* arg = own slave address */
#define ARM_I2C_BUS_SPEED            (0x02UL) /* arg = ARM_I2C_BUS_SPEED_* */
#define ARM_I2C_BUS_CLEAR            (0x03UL)
#define ARM_I2C_ABORT_TRANSFER       (0x04UL)

#define ARM_I2C_BUS_SPEED_STANDARD   (0x01UL) /* 100 kHz */
#define ARM_I2C_BUS_SPEED_FAST       (0x02UL) /* 400 kHz */
#define ARM_I2C_BUS_SPEED_FAST_PLUS  (0x03UL) /* 1 MHz */
#define ARM_I2C_BUS_SPEED_HIGH       (0x04UL) /* 3.4 MHz */

/* Flags OR-ed into the address argument */
#define ARM_I2C_ADDRESS_10BIT        (0x0400UL)
#define ARM_I2C_ADDRESS_GC           (0x8000UL)

/* Event flags passed to the ARM_I2C_SignalEvent_t callback */
#define ARM_I2C_EVENT_TRANSFER_DONE       (1UL << 0)
#define ARM_I2C_EVENT_TRANSFER_INCOMPLETE (1UL << 1)
#define ARM_I2C_EVENT_SLAVE_TRANSMIT      (1UL << 2)
#define ARM_I2C_EVENT_SLAVE_RECEIVE       (1UL << 3)
#define ARM_I2C_EVENT_ADDRESS_NACK        (1UL << 4)
#define ARM_I2C_EVENT_GENERAL_CALL        (1UL << 5)
#define ARM_I2C_EVENT_ARBITRATION_LOST    (1UL << 6)
#define ARM_I2C_EVENT_BUS_ERROR           (1UL << 7)
#define ARM_I2C_EVENT_BUS_CLEAR           (1UL << 8)

typedef struct _ARM_I2C_STATUS {
    unsigned int busy             : 1;
    unsigned int mode             : 1; /* 0 slave, 1 master */
    unsigned int direction        : 1; /* 0 transmitter, 1 receiver */
    unsigned int general_call     : 1;
    unsigned int arbitration_lost : 1;
    unsigned int bus_error        : 1;
    unsigned int reserved         : 26;
} ARM_I2C_STATUS;

typedef void (*ARM_I2C_SignalEvent_t)(uint32_t event);

typedef struct _ARM_I2C_CAPABILITIES {
    unsigned int address_10_bit : 1;
    unsigned int reserved       : 31;
} ARM_I2C_CAPABILITIES;

/* Driver access structure; instances are const (e.g. Driver_I2C0). */
typedef struct _ARM_DRIVER_I2C {
    ARM_DRIVER_VERSION   (*GetVersion)(void);
    ARM_I2C_CAPABILITIES (*GetCapabilities)(void);
    int32_t              (*Initialize)(ARM_I2C_SignalEvent_t cb_event);
    int32_t              (*Uninitialize)(void);
    int32_t              (*PowerControl)(ARM_POWER_STATE state);
    int32_t              (*MasterTransmit)(uint32_t addr, const uint8_t *data, uint32_t num, bool xfer_pending);
    int32_t              (*MasterReceive)(uint32_t addr, uint8_t *data, uint32_t num, bool xfer_pending);
    int32_t              (*SlaveTransmit)(const uint8_t *data, uint32_t num);
    int32_t              (*SlaveReceive)(uint8_t *data, uint32_t num);
    int32_t              (*GetDataCount)(void); /* -1 if slave not addressed */
    int32_t              (*Control)(uint32_t control, uint32_t arg);
    ARM_I2C_STATUS       (*GetStatus)(void);
} const ARM_DRIVER_I2C;

#ifdef __cplusplus
}
#endif

#endif /* DRIVER_I2C_H_ */
