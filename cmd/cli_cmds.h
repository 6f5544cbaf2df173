/* cli_cmds.h - the commands that read a live cluster through the API
 * (cmd/live.h): each takes its arguments after the command's name
 * (argv[0] is "top", "explain" or "simulate") and returns the exit status:
 * 0 done, 1 the cluster could not be read or the input is wrong (the
 * message names the server's address, or the object), 2 a usage error.
 */
#ifndef KB_CMD_CLI_CMDS_H
#define KB_CMD_CLI_CMDS_H

#include <stdbool.h>

/* `kube-batchd top nodes|queues|jobs` (cmd/top.c). */
int kb_cmd_top(int argc, char **argv);

/* `kube-batchd explain NAMESPACE/PODGROUP` (cmd/explain.c). */
int kb_cmd_explain(int argc, char **argv);

/* `kube-batchd simulate --from-cluster [-f NEW.yaml]...` (cmd/from_cluster.c). */
int kb_cmd_simulate_from_cluster(int argc, char **argv);

/* `kube-batchd replay FILE` (cmd/replay.c): the sessions of a --record
 * file run again; 0 all identical, 1 a difference or a file refused, 2 a
 * usage error. Reads no cluster. */
int kb_cmd_replay(int argc, char **argv);

/* Whether argv[1..argc) asks simulate for --from-cluster. */
bool kb_cmd_wants_from_cluster(int argc, char **argv);

#endif
