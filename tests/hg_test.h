/* hg_test.h - the assertion macros of the C tests. EXPECT counts a failure
 * and goes on; REQUIRE stops the test (later checks depend on it). A test
 * returns failures ? 1 : 0 (automake: 77 = skip, 99 = hard error). */
#ifndef HG_TEST_H
#define HG_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

/* One report line: "FAIL file:line: cond: message". */
static inline void hg_test_report(const char *what, const char *file, int line,
                           const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline void hg_test_report(const char *what, const char *file, int line,
                           const char *cond, const char *fmt, ...)
{
    va_list ap;
    printf("%s %s:%d: %s: ", what, file, line, cond);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            hg_test_report("FAIL", __FILE__, __LINE__, #cond, __VA_ARGS__);    \
        }                                                                      \
    } while (0)

#define REQUIRE(cond, ...)                                                     \
    do {                                                                       \
        if (!(cond)) {                                                         \
            hg_test_report("FATAL", __FILE__, __LINE__, #cond, __VA_ARGS__);   \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#endif
