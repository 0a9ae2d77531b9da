/* nodes.h: the node of files whose path names it in a layout of the
 * collector's own (nodes.c). */
#ifndef IQ_NODES_H
#define IQ_NODES_H

#include <stddef.h>

#include "../store/store.h"

/* The node path was written on, of the known names[0..nn): a path
 * component (archive suffix stripped) that is one of them or the first
 * DNS label of exactly one, else the one name (or first label) the file
 * name holds between non-alphanumerics; NULL when none or several. The
 * result points into names. */
const char *iq_nodes_of_path(char **names, size_t nn, const char *path);

/* Gives every file without a node the one its path names, and its records
 * (and their typed rows) without a node of their own the same. The known
 * names: pod specs' nodes, files' nodes, events' hosts. 0 or IQ_ERR_DB. */
int iq_nodes_resolve(struct iq_store *s, struct iq_diag *d);

#endif
