/* cluster.h: the cluster as the planner understands it.
 *
 * A cluster is one or more node groups; every node of a group is alike.
 * Bandwidths are one-way, bytes per second, per GPU; latencies in seconds.
 * Links between groups are listed for heterogeneous clusters; a pair with no
 * listed link uses the slower of the two groups' inter-node figures.
 */
#ifndef PLANNER_CLUSTER_H
#define PLANNER_CLUSTER_H

#include "inputs/catalog.h"
#include "base/error.h"

#define CLUSTER_NAME_MAX 128
#define CLUSTER_MAX_GROUPS 64
#define CLUSTER_MAX_GPUS 1048576

typedef struct node_group {
    char name[CLUSTER_NAME_MAX];
    gpu_spec gpu;                   /* catalog row with the file's overrides */
    int nodes;
    int gpus_per_node;
    double intra_bytes_per_s;       /* inside a node, per GPU, one-way */
    double intra_latency_s;
    double inter_bytes_per_s;       /* across nodes, per GPU, one-way */
    double inter_latency_s;
} node_group;

typedef struct group_link {
    int a, b;                       /* indices into cluster.group */
    double bytes_per_s;             /* per GPU, one-way */
    double latency_s;
} group_link;

/* The `reliability:` and `storage:` blocks of the file; 0 = not given (the
 * defaults are schedule/goodput.c's). */
typedef struct cluster_reliability {
    double failures_per_1000_node_days;
    double restart_s;                 /* fixed part of a restart */
    double storage_write_bytes_per_s; /* aggregate, checkpoint writes */
    double storage_read_bytes_per_s;  /* aggregate, checkpoint loads */
} cluster_reliability;

typedef struct cluster {
    char name[CLUSTER_NAME_MAX];
    int n_groups;
    node_group *group;              /* owned */
    int n_links;
    group_link *link;               /* owned */
    cluster_reliability reliability;
    int stack;                      /* stack_id (inputs/stack.h): the software
                                       stack; 0 = megatron-core, the default */
} cluster;

/* Reads a YAML cluster spec.  On success *out owns a new cluster (free with
 * cluster_free) and 0 is returned; otherwise *err says what is wrong. */
planner_status cluster_load(cluster **out, const char *path, planner_error *err);
planner_status cluster_load_buffer(cluster **out, const char *text, size_t len,
                                   const char *name, planner_error *err);
void cluster_free(cluster *c);      /* NULL-safe */

int cluster_total_gpus(const cluster *c);
int group_total_gpus(const node_group *g);

/* The link between two groups (a == b: the group's own inter-node link). */
void cluster_link_between(const cluster *c, int a, int b, double *bytes_per_s,
                          double *latency_s);

#endif
