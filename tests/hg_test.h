/* hg_test.h - the assertion macros of the C tests. EXPECT counts a failure
 * and goes on; REQUIRE stops the test (later checks depend on it). A test
 * returns failures ? 1 : 0 (automake: 77 = skip, 99 = hard error). */
#ifndef HG_TEST_H
#define HG_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int failures;

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);             \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
            fflush(stdout);                                                    \
        }                                                                      \
    } while (0)

#define REQUIRE(cond, ...)                                                     \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("FATAL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#endif
