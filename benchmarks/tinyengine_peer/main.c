/*
 * The TinyEngine peer's firmware (benchmarks/_tinyengine_peer.py builds it): the code MIT
 * TinyEngine's generator wrote for one model (genModel.c, its static buffer included),
 * run once on a bare-metal tvmdev board (runtime/cortex_m's startup, the CMSDK console
 * UART). It copies the model's int8 input into TinyEngine's input (getInput()), runs
 * invoke(), counted with runtime/cortex_m/icount.c when built with TVMDEV_ICOUNT, and
 * prints, each on its own line:
 *
 *   tvmdev: icount ticks N        (with TVMDEV_ICOUNT)
 *   tinyengine: output HEX        (the TE_PEER_OUTPUT_BYTES bytes at getOutput())
 *   tinyengine: done
 */
#include <stdint.h>
#include <string.h>

#include "Driver_USART.h"
#include "genNN.h"
#ifdef TVMDEV_ICOUNT
#include "icount.h"
#endif

extern const signed char te_peer_input[];
extern const unsigned int te_peer_input_len;

#define PEER_USART_NAME(n) Driver_USART##n
#define PEER_USART(n) PEER_USART_NAME(n)
extern ARM_DRIVER_USART PEER_USART(TE_PEER_CONSOLE);

static void put(const char *text)
{
    uint32_t n = 0;

    while (text[n] != '\0') {
        n++;
    }
    (void)PEER_USART(TE_PEER_CONSOLE).Send(text, n);
}

#ifdef TVMDEV_ICOUNT
static void put_u64(uint64_t value)
{
    char text[24];
    int i = 23;

    text[i--] = '\0';
    do {
        text[i--] = (char)('0' + value % 10U);
        value /= 10U;
    } while (value != 0U);
    put(&text[i + 1]);
}
#endif

static void put_hex(const signed char *bytes, uint32_t n)
{
    static const char digits[] = "0123456789abcdef";
    char pair[3] = {0, 0, 0};
    uint32_t i;

    for (i = 0; i < n; i++) {
        pair[0] = digits[((uint8_t)bytes[i]) >> 4];
        pair[1] = digits[((uint8_t)bytes[i]) & 0xFU];
        put(pair);
    }
}

int main(void)
{
#ifdef TVMDEV_ICOUNT
    uint64_t ticks;
#endif

    (void)PEER_USART(TE_PEER_CONSOLE).Initialize(0);
    (void)PEER_USART(TE_PEER_CONSOLE).PowerControl(ARM_POWER_FULL);
    memcpy(getInput(), te_peer_input, te_peer_input_len);
#ifdef TVMDEV_ICOUNT
    tvmdev_icount_start();
#endif
    invoke(0);
#ifdef TVMDEV_ICOUNT
    ticks = tvmdev_icount_ticks();
    put("tvmdev: icount ticks ");
    put_u64(ticks);
    put("\n");
#endif
    put("tinyengine: output ");
    put_hex(getOutput(), TE_PEER_OUTPUT_BYTES);
    put("\ntinyengine: done\n");
    return 0;
}
