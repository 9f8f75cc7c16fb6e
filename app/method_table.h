/* method_table.h — registers every method this build has (CPU references and, with CUDA,
 * their GPU twins) with core's registry. Call once at start-up, main thread. */
#ifndef NW_METHOD_TABLE_H
#define NW_METHOD_TABLE_H

#ifdef __cplusplus
extern "C" {
#endif

void nw_methods_register_builtin(void);

#ifdef __cplusplus
}
#endif

#endif
