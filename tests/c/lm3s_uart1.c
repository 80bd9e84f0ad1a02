/*
 * Whether Zephyr's qemu_cortex_m3 machine (QEMU's lm3s6965evb) can reach a co-processor
 * the way the MPS boards do: its UART1 (the Stellaris PL011 at 0x4000D000, interrupt 6 in
 * Zephyr's devicetree, where it is enabled) is QEMU's second -serial, so a socket chardev
 * there joins it to another machine. Polled, bare metal: it sends a line, then waits for
 * one byte back and says over semihosting what came.
 */
#include <stdint.h>

#include "semihosting.h"

#define UART1 ((volatile uint32_t *)0x4000D000U)
#define DR 0U
#define FR (0x18U / 4U)
#define CTL (0x30U / 4U)
#define FR_RXFE (1U << 4)
#define FR_TXFF (1U << 5)

int main(void)
{
    const char *s = "lm3s6965evb UART1 says hello\n";

    UART1[CTL] = 0x301U; /* UARTEN, TXE, RXE */
    while (*s != '\0') {
        while (UART1[FR] & FR_TXFF) {
        }
        UART1[DR] = (uint8_t)*s++;
    }
    while (UART1[FR] & FR_RXFE) {
    }
    tvmdev_semihosting_write0((UART1[DR] & 0xFFU) == 'K' ? "got K over UART1\n"
                                                        : "got another byte\n");
    return 0;
}
