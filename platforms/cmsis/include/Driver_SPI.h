/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal declarations of the CMSIS-Driver SPI API, written for tvmdev
 * from the published API reference. Not the Arm headers; link against the
 * real ones in production.
 *
 * Bit-fields are declared as unsigned int (same 32-bit layout as the
 * reference) so that the header stays clean under -std=c99 -pedantic.
 */
#ifndef DRIVER_SPI_H_
#define DRIVER_SPI_H_

#include <stdint.h>

#include "Driver_Common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARM_SPI_API_VERSION ARM_DRIVER_VERSION_MAJOR_MINOR(2, 3)

/* ---- Control word layout (argument "control" of Control()) ---- */
#define ARM_SPI_CONTROL_Pos          0
#define ARM_SPI_CONTROL_Msk          (0xFFUL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_FRAME_FORMAT_Pos     8
#define ARM_SPI_FRAME_FORMAT_Msk     (7UL << ARM_SPI_FRAME_FORMAT_Pos)
#define ARM_SPI_DATA_BITS_Pos        12
#define ARM_SPI_DATA_BITS_Msk        (0x3FUL << ARM_SPI_DATA_BITS_Pos)
#define ARM_SPI_BIT_ORDER_Pos        18
#define ARM_SPI_BIT_ORDER_Msk        (1UL << ARM_SPI_BIT_ORDER_Pos)
#define ARM_SPI_SS_MASTER_MODE_Pos   19
#define ARM_SPI_SS_MASTER_MODE_Msk   (3UL << ARM_SPI_SS_MASTER_MODE_Pos)
#define ARM_SPI_SS_SLAVE_MODE_Pos    21
#define ARM_SPI_SS_SLAVE_MODE_Msk    (1UL << ARM_SPI_SS_SLAVE_MODE_Pos)

/* Modes (master modes: arg = bus speed in bps) */
#define ARM_SPI_MODE_INACTIVE        (0x00UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_MODE_MASTER          (0x01UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_MODE_SLAVE           (0x02UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_MODE_MASTER_SIMPLEX  (0x03UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_MODE_SLAVE_SIMPLEX   (0x04UL << ARM_SPI_CONTROL_Pos)

/* Mode parameters, OR-ed with a mode */
#define ARM_SPI_CPOL0_CPHA0          (0UL << ARM_SPI_FRAME_FORMAT_Pos) /* default */
#define ARM_SPI_CPOL0_CPHA1          (1UL << ARM_SPI_FRAME_FORMAT_Pos)
#define ARM_SPI_CPOL1_CPHA0          (2UL << ARM_SPI_FRAME_FORMAT_Pos)
#define ARM_SPI_CPOL1_CPHA1          (3UL << ARM_SPI_FRAME_FORMAT_Pos)
#define ARM_SPI_TI_SSI               (4UL << ARM_SPI_FRAME_FORMAT_Pos)
#define ARM_SPI_MICROWIRE            (5UL << ARM_SPI_FRAME_FORMAT_Pos)
#define ARM_SPI_DATA_BITS(n)         (((n) & 0x3FUL) << ARM_SPI_DATA_BITS_Pos)
#define ARM_SPI_MSB_LSB              (0UL << ARM_SPI_BIT_ORDER_Pos) /* default */
#define ARM_SPI_LSB_MSB              (1UL << ARM_SPI_BIT_ORDER_Pos)
#define ARM_SPI_SS_MASTER_UNUSED     (0UL << ARM_SPI_SS_MASTER_MODE_Pos) /* default */
#define ARM_SPI_SS_MASTER_SW         (1UL << ARM_SPI_SS_MASTER_MODE_Pos)
#define ARM_SPI_SS_MASTER_HW_OUTPUT  (2UL << ARM_SPI_SS_MASTER_MODE_Pos)
#define ARM_SPI_SS_MASTER_HW_INPUT   (3UL << ARM_SPI_SS_MASTER_MODE_Pos)
#define ARM_SPI_SS_SLAVE_HW          (0UL << ARM_SPI_SS_SLAVE_MODE_Pos) /* default */
#define ARM_SPI_SS_SLAVE_SW          (1UL << ARM_SPI_SS_SLAVE_MODE_Pos)

/* Miscellaneous operations */
#define ARM_SPI_SET_BUS_SPEED        (0x10UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_GET_BUS_SPEED        (0x11UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_SET_DEFAULT_TX_VALUE (0x12UL << ARM_SPI_CONTROL_Pos)
#define ARM_SPI_CONTROL_SS           (0x13UL << ARM_SPI_CONTROL_Pos) /* arg: ARM_SPI_SS_* */
#define ARM_SPI_ABORT_TRANSFER       (0x14UL << ARM_SPI_CONTROL_Pos)

#define ARM_SPI_SS_INACTIVE          0
#define ARM_SPI_SS_ACTIVE            1

/* SPI-specific status codes */
#define ARM_SPI_ERROR_MODE           (ARM_DRIVER_ERROR_SPECIFIC - 1)
#define ARM_SPI_ERROR_FRAME_FORMAT   (ARM_DRIVER_ERROR_SPECIFIC - 2)
#define ARM_SPI_ERROR_DATA_BITS      (ARM_DRIVER_ERROR_SPECIFIC - 3)
#define ARM_SPI_ERROR_BIT_ORDER      (ARM_DRIVER_ERROR_SPECIFIC - 4)
#define ARM_SPI_ERROR_SS_MODE        (ARM_DRIVER_ERROR_SPECIFIC - 5)

/* Event flags passed to the ARM_SPI_SignalEvent_t callback */
#define ARM_SPI_EVENT_TRANSFER_COMPLETE (1UL << 0)
#define ARM_SPI_EVENT_DATA_LOST         (1UL << 1)
#define ARM_SPI_EVENT_MODE_FAULT        (1UL << 2)

typedef struct _ARM_SPI_STATUS {
    unsigned int busy       : 1;
    unsigned int data_lost  : 1;
    unsigned int mode_fault : 1;
    unsigned int reserved   : 29;
} ARM_SPI_STATUS;

typedef void (*ARM_SPI_SignalEvent_t)(uint32_t event);

typedef struct _ARM_SPI_CAPABILITIES {
    unsigned int simplex          : 1;
    unsigned int ti_ssi           : 1;
    unsigned int microwire        : 1;
    unsigned int event_mode_fault : 1;
    unsigned int reserved         : 28;
} ARM_SPI_CAPABILITIES;

/* Driver access structure; instances are const (e.g. Driver_SPI0). */
typedef struct _ARM_DRIVER_SPI {
    ARM_DRIVER_VERSION   (*GetVersion)(void);
    ARM_SPI_CAPABILITIES (*GetCapabilities)(void);
    int32_t              (*Initialize)(ARM_SPI_SignalEvent_t cb_event);
    int32_t              (*Uninitialize)(void);
    int32_t              (*PowerControl)(ARM_POWER_STATE state);
    int32_t              (*Send)(const void *data, uint32_t num);
    int32_t              (*Receive)(void *data, uint32_t num);
    int32_t              (*Transfer)(const void *data_out, void *data_in, uint32_t num);
    uint32_t             (*GetDataCount)(void);
    int32_t              (*Control)(uint32_t control, uint32_t arg);
    ARM_SPI_STATUS       (*GetStatus)(void);
} const ARM_DRIVER_SPI;

#ifdef __cplusplus
}
#endif

#endif /* DRIVER_SPI_H_ */
