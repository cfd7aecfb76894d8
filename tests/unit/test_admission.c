#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "seccomp_profile.h"

/*
 * The admission checker against the inspect JSON the real daemon produced
 * for the default profile (tests/fixtures/inspect-ok.json), then against
 * mutants of it: each mutant changes one thing and must be refused by
 * exactly the check that guards that thing, every other check still
 * passing. A sweep then breaks every key of both documents in every way
 * and only asks that nothing crashes (run under ASan/UBSan).
 */

/* Loaded once by the group setup; each test works on deep copies. */
static json_t *ok_container, *ok_image;

enum doc { CONTAINER, IMAGE };

/*
 * A mutation: a JSON object, single-quoted for readability, mapping a
 * dotted path to its new value. A path prefixed with '-' is deleted; the
 * empty path replaces the whole document. refused lists the check ids that
 * must refuse, space-separated: "" means admitted, "*" means refused for
 * reasons not worth listing (a whole section gone).
 */
struct mutant {
	enum doc doc;
	const char *patch;
	const char *refused;
};

struct fixture {
	json_t *c, *img;
	struct profile p;
	struct host_facts host;
	const struct admission_state *state;	/* NULL: no admission's phase */
	struct check_list r;
	bool admitted;
	const struct mutant *m;
};

#define SHA_A "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define SHA_B "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define SHA_UPPER "sha256:0C88912505E2C6CBB2108B07ACD6E30665B153E491259AB2EE8BABE6578E567C"
#define CORE "{'Name':'core','Soft':0,'Hard':0}"
/* What a runsc profile's container reports: core and the agent's nproc bound. */
#define RUNSC_NPROC "'HostConfig.Ulimits':[" CORE ",{'Name':'nproc','Soft':32,'Hard':32}]"
/*
 * And its SecurityOpt: no-new-privileges and airlock's runsc seccomp profile
 * (a patch value "@runsc" stands for that array, engine/admission/seccomp.h's own).
 */
#define RUNSC_SECCOMP "'HostConfig.SecurityOpt':'@runsc'"

/* The fixture once started: what the daemon reports of a running container. */
#define STARTED_AT "2026-12-08T00:32:50.691083673Z"
#define RUNNING "'State.Status':'running','State.Running':true,'State.Pid':2011," \
	"'State.StartedAt':'" STARTED_AT "'"

#define RUNNING_BASE "{" RUNNING "}"

#define MUTANTS(_) \
	_(unchanged, CONTAINER, "{}", "") \
	/* image and mounts */ \
	_(image_tag, CONTAINER, "{'Image':'proto-echoer:latest'}", "image_id") \
	_(image_config_tag, CONTAINER, "{'Config.Image':'proto-echoer:latest'}", "image_id") \
	_(image_short_id, CONTAINER, "{'Image':'sha256:0c8891','Config.Image':'sha256:0c8891'}", "image_id") \
	_(image_uppercase, CONTAINER, "{'Image':'" SHA_UPPER "','Config.Image':'" SHA_UPPER "'}", "image_id") \
	_(image_other_id, CONTAINER, "{'Image':'" SHA_A "','Config.Image':'" SHA_A "'}", "image_id") \
	_(image_config_other, CONTAINER, "{'Config.Image':'" SHA_A "'}", "image_id") \
	_(image_missing, CONTAINER, "{'-Image':0}", "image_id") \
	_(image_number, CONTAINER, "{'Image':7}", "image_id") \
	_(image_json_other_id, IMAGE, "{'Id':'" SHA_B "'}", "image_id") \
	_(image_json_id_missing, IMAGE, "{'-Id':0}", "image_id") \
	_(image_volume, IMAGE, "{'Config.Volumes':{'/data':{}}}", "image_volumes") \
	_(image_volumes_empty_ok, IMAGE, "{'Config.Volumes':{}}", "") \
	_(image_volumes_absent_ok, IMAGE, "{'-Config.Volumes':0}", "") \
	_(image_volumes_string, IMAGE, "{'Config.Volumes':'/data'}", "image_volumes") \
	_(container_volume, CONTAINER, "{'Config.Volumes':{'/data':{}}}", "container_volumes") \
	_(container_volumes_empty_ok, CONTAINER, "{'Config.Volumes':{}}", "") \
	_(anon_volume, CONTAINER, "{'Mounts':[{'Type':'volume','Name':'7732'," \
	  "'Source':'/var/lib/docker/volumes/7732/_data','Destination':'/scratchvol','RW':true}]}", "anon_mounts") \
	_(anon_mounts_null_ok, CONTAINER, "{'Mounts':null}", "") \
	_(anon_mounts_missing, CONTAINER, "{'-Mounts':0}", "anon_mounts") \
	_(anon_mounts_object, CONTAINER, "{'Mounts':{}}", "anon_mounts") \
	/* network, root, privileges */ \
	_(network_host, CONTAINER, "{'HostConfig.NetworkMode':'host'}", "network_mode") \
	_(network_bridge, CONTAINER, "{'HostConfig.NetworkMode':'bridge'}", "network_mode") \
	_(network_container, CONTAINER, "{'HostConfig.NetworkMode':'container:x'}", "network_mode") \
	_(network_missing, CONTAINER, "{'-HostConfig.NetworkMode':0}", "network_mode") \
	_(netns_false, CONTAINER, "{'Config.NetworkDisabled':false}", "network_disabled") \
	_(netns_absent, CONTAINER, "{'-Config.NetworkDisabled':0}", "network_disabled") \
	_(netns_null, CONTAINER, "{'Config.NetworkDisabled':null}", "network_disabled") \
	_(netns_string, CONTAINER, "{'Config.NetworkDisabled':'true'}", "network_disabled") \
	_(readonly_false, CONTAINER, "{'HostConfig.ReadonlyRootfs':false}", "readonly_rootfs") \
	_(readonly_string, CONTAINER, "{'HostConfig.ReadonlyRootfs':'true'}", "readonly_rootfs") \
	_(readonly_missing, CONTAINER, "{'-HostConfig.ReadonlyRootfs':0}", "readonly_rootfs") \
	_(privileged_true, CONTAINER, "{'HostConfig.Privileged':true}", "privileged") \
	_(privileged_null, CONTAINER, "{'HostConfig.Privileged':null}", "privileged") \
	_(cap_add_net_raw, CONTAINER, "{'HostConfig.CapAdd':['NET_RAW']}", "cap_add") \
	_(cap_add_all, CONTAINER, "{'HostConfig.CapAdd':['ALL']}", "cap_add") \
	_(cap_add_null_ok, CONTAINER, "{'HostConfig.CapAdd':null}", "") \
	_(cap_add_missing, CONTAINER, "{'-HostConfig.CapAdd':0}", "cap_add") \
	_(cap_add_object, CONTAINER, "{'HostConfig.CapAdd':{}}", "cap_add") \
	_(cap_drop_lowercase, CONTAINER, "{'HostConfig.CapDrop':['all']}", "cap_drop") \
	_(cap_drop_empty, CONTAINER, "{'HostConfig.CapDrop':[]}", "cap_drop") \
	_(cap_drop_null, CONTAINER, "{'HostConfig.CapDrop':null}", "cap_drop") \
	_(cap_drop_one_cap, CONTAINER, "{'HostConfig.CapDrop':['NET_RAW']}", "cap_drop") \
	_(cap_drop_extra, CONTAINER, "{'HostConfig.CapDrop':['ALL','NET_RAW']}", "cap_drop") \
	_(cap_drop_string, CONTAINER, "{'HostConfig.CapDrop':'ALL'}", "cap_drop") \
	_(secopt_nnp_colon_ok, CONTAINER, "{'HostConfig.SecurityOpt':['no-new-privileges:true']}", "") \
	_(secopt_nnp_bare_ok, CONTAINER, "{'HostConfig.SecurityOpt':['no-new-privileges']}", "") \
	_(secopt_nnp_false, CONTAINER, "{'HostConfig.SecurityOpt':['no-new-privileges=false']}", "security_opt") \
	_(secopt_seccomp_unconfined, CONTAINER, \
	  "{'HostConfig.SecurityOpt':['no-new-privileges=true','seccomp=unconfined']}", "security_opt seccomp") \
	_(secopt_apparmor_unconfined, CONTAINER, \
	  "{'HostConfig.SecurityOpt':['no-new-privileges=true','apparmor=unconfined']}", "security_opt") \
	_(secopt_label_disable, CONTAINER, \
	  "{'HostConfig.SecurityOpt':['no-new-privileges=true','label=disable']}", "security_opt") \
	_(secopt_systempaths_unconfined, CONTAINER, \
	  "{'HostConfig.SecurityOpt':['no-new-privileges=true','systempaths=unconfined']}", "security_opt") \
	_(secopt_seccomp_custom, CONTAINER, \
	  "{'HostConfig.SecurityOpt':['no-new-privileges=true','seccomp={defaultAction:SCMP_ACT_ALLOW}']}", \
	  "security_opt seccomp") \
	_(secopt_seccomp_only, CONTAINER, "{'HostConfig.SecurityOpt':['seccomp=unconfined']}", "security_opt seccomp") \
	_(secopt_twice, CONTAINER, \
	  "{'HostConfig.SecurityOpt':['no-new-privileges=true','no-new-privileges=true']}", "security_opt") \
	_(secopt_empty, CONTAINER, "{'HostConfig.SecurityOpt':[]}", "security_opt") \
	_(secopt_null, CONTAINER, "{'HostConfig.SecurityOpt':null}", "security_opt seccomp") \
	_(secopt_runsc_profile_under_runc, CONTAINER, "{" RUNSC_SECCOMP "}", "seccomp") \
	_(secopt_missing, CONTAINER, "{'-HostConfig.SecurityOpt':0}", "security_opt seccomp") \
	_(apparmor_unconfined, CONTAINER, "{'AppArmorProfile':'unconfined'}", "security_opt") \
	_(apparmor_default_ok, CONTAINER, "{'AppArmorProfile':'docker-default'}", "") \
	_(apparmor_missing, CONTAINER, "{'-AppArmorProfile':0}", "security_opt") \
	/* logs and restarts */ \
	_(log_json_file, CONTAINER, "{'HostConfig.LogConfig':{'Type':'json-file','Config':{}}}", "log_config") \
	_(log_syslog, CONTAINER, "{'HostConfig.LogConfig.Type':'syslog'}", "log_config") \
	_(log_config_missing, CONTAINER, "{'-HostConfig.LogConfig':0}", "log_config") \
	_(restart_always, CONTAINER, "{'HostConfig.RestartPolicy.Name':'always'}", "restart_policy") \
	_(restart_on_failure, CONTAINER, \
	  "{'HostConfig.RestartPolicy':{'Name':'on-failure','MaximumRetryCount':3}}", "restart_policy") \
	_(restart_retries, CONTAINER, "{'HostConfig.RestartPolicy.MaximumRetryCount':1}", "restart_policy") \
	_(restart_empty_name_ok, CONTAINER, "{'HostConfig.RestartPolicy.Name':''}", "") \
	_(restart_missing, CONTAINER, "{'-HostConfig.RestartPolicy':0}", "restart_policy") \
	/* ulimits */ \
	_(ulimits_empty, CONTAINER, "{'HostConfig.Ulimits':[]}", "ulimit_core") \
	_(ulimits_null, CONTAINER, "{'HostConfig.Ulimits':null}", "ulimit_core") \
	_(ulimit_core_hard_unlimited, CONTAINER, \
	  "{'HostConfig.Ulimits':[{'Name':'core','Soft':0,'Hard':-1}]}", "ulimit_core") \
	_(ulimit_core_soft, CONTAINER, \
	  "{'HostConfig.Ulimits':[{'Name':'core','Soft':1024,'Hard':1024}]}", "ulimit_core") \
	_(ulimit_core_twice, CONTAINER, "{'HostConfig.Ulimits':[" CORE "," CORE "]}", "ulimit_core") \
	_(ulimit_extra_nproc, CONTAINER, \
	  "{'HostConfig.Ulimits':[" CORE ",{'Name':'nproc','Soft':10,'Hard':10}]}", "ulimits_other") \
	_(ulimit_nofile_unconfigured, CONTAINER, \
	  "{'HostConfig.Ulimits':[" CORE ",{'Name':'nofile','Soft':1024,'Hard':1024}]}", "ulimits_other") \
	_(ulimit_malformed, CONTAINER, \
	  "{'HostConfig.Ulimits':[" CORE ",{'Name':'nproc','Soft':'1','Hard':1}]}", "ulimit_core ulimits_other") \
	_(ulimits_missing, CONTAINER, "{'-HostConfig.Ulimits':0}", "ulimit_core ulimits_other") \
	/* limits */ \
	_(pids_null, CONTAINER, "{'HostConfig.PidsLimit':null}", "pids_limit") \
	_(pids_0, CONTAINER, "{'HostConfig.PidsLimit':0}", "pids_limit") \
	_(pids_minus_1, CONTAINER, "{'HostConfig.PidsLimit':-1}", "pids_limit") \
	_(pids_2000, CONTAINER, "{'HostConfig.PidsLimit':2000}", "pids_limit") \
	_(pids_64, CONTAINER, "{'HostConfig.PidsLimit':64}", "pids_limit") \
	_(pids_string, CONTAINER, "{'HostConfig.PidsLimit':'32'}", "pids_limit") \
	_(pids_real, CONTAINER, "{'HostConfig.PidsLimit':32.0}", "pids_limit") \
	_(memory_0, CONTAINER, "{'HostConfig.Memory':0,'HostConfig.MemorySwap':0}", "memory") \
	_(memory_5g, CONTAINER, \
	  "{'HostConfig.Memory':5368709120,'HostConfig.MemorySwap':5368709120}", "memory") \
	_(memory_64m, CONTAINER, "{'HostConfig.Memory':67108864,'HostConfig.MemorySwap':67108864}", "memory") \
	_(memory_null, CONTAINER, "{'HostConfig.Memory':null}", "memory memory_swap") \
	_(memory_swap_double, CONTAINER, "{'HostConfig.MemorySwap':268435456}", "memory_swap") \
	_(memory_swap_unlimited, CONTAINER, "{'HostConfig.MemorySwap':-1}", "memory_swap") \
	_(memory_swap_missing, CONTAINER, "{'-HostConfig.MemorySwap':0}", "memory_swap") \
	_(nano_cpus_2, CONTAINER, "{'HostConfig.NanoCpus':2000000000}", "nano_cpus") \
	_(nano_cpus_half, CONTAINER, "{'HostConfig.NanoCpus':500000000}", "nano_cpus") \
	_(nano_cpus_0, CONTAINER, "{'HostConfig.NanoCpus':0}", "nano_cpus") \
	_(oom_kill_disable_true, CONTAINER, "{'HostConfig.OomKillDisable':true}", "oom_kill_disable") \
	_(oom_kill_disable_null_ok, CONTAINER, "{'HostConfig.OomKillDisable':null}", "") \
	_(oom_kill_disable_string, CONTAINER, "{'HostConfig.OomKillDisable':'false'}", "oom_kill_disable") \
	_(init_false, CONTAINER, "{'HostConfig.Init':false}", "init") \
	_(init_absent, CONTAINER, "{'-HostConfig.Init':0}", "init") \
	_(init_null, CONTAINER, "{'HostConfig.Init':null}", "init") \
	/* things reaching the host */ \
	_(binds, CONTAINER, "{'HostConfig.Binds':['/etc:/etc:ro']}", "binds") \
	_(binds_empty_ok, CONTAINER, "{'HostConfig.Binds':[]}", "") \
	_(binds_absent_ok, CONTAINER, "{'-HostConfig.Binds':0}", "") \
	_(binds_string, CONTAINER, "{'HostConfig.Binds':'/etc:/etc'}", "binds") \
	_(mounts_bind, CONTAINER, "{'HostConfig.Mounts':[{'Type':'bind','Source':'/etc','Target':'/x'}]}", "mounts") \
	_(mounts_tmpfs, CONTAINER, "{'HostConfig.Mounts':[{'Type':'tmpfs','Target':'/scratchvol'}]}", "mounts") \
	_(mounts_empty_ok, CONTAINER, "{'HostConfig.Mounts':[]}", "") \
	_(volumes_from, CONTAINER, "{'HostConfig.VolumesFrom':['other']}", "volumes_from") \
	_(devices, CONTAINER, "{'HostConfig.Devices':[{'PathOnHost':'/dev/kvm'," \
	  "'PathInContainer':'/dev/kvm','CgroupPermissions':'rwm'}]}", "devices") \
	_(device_requests, CONTAINER, "{'HostConfig.DeviceRequests':[{'Driver':'nvidia','Count':-1}]}", \
	  "device_requests") \
	_(port_bindings, CONTAINER, "{'HostConfig.PortBindings':{'80/tcp':[{'HostIp':'','HostPort':'8080'}]}}", \
	  "port_bindings") \
	_(port_bindings_empty_ok, CONTAINER, "{'HostConfig.PortBindings':{}}", "") \
	_(links, CONTAINER, "{'HostConfig.Links':['/other:/airlock/other']}", "links") \
	_(sysctls, CONTAINER, "{'HostConfig.Sysctls':{'net.ipv6.conf.all.disable_ipv6':'0'}}", "sysctls") \
	_(sysctls_empty_ok, CONTAINER, "{'HostConfig.Sysctls':{}}", "") \
	_(extra_hosts, CONTAINER, "{'HostConfig.ExtraHosts':['evil:10.0.0.1']}", "extra_hosts") \
	_(tmpfs_unexpected, CONTAINER, "{'HostConfig.Tmpfs':{'/tmp':'rw,size=1m'}}", "tmpfs") \
	_(tmpfs_empty_ok, CONTAINER, "{'HostConfig.Tmpfs':{}}", "") \
	_(tmpfs_null_ok, CONTAINER, "{'HostConfig.Tmpfs':null}", "") \
	_(tmpfs_array, CONTAINER, "{'HostConfig.Tmpfs':['/tmp']}", "tmpfs") \
	_(cgroup_parent, CONTAINER, "{'HostConfig.CgroupParent':'/evil'}", "cgroup_parent") \
	/* namespaces */ \
	_(pid_host, CONTAINER, "{'HostConfig.PidMode':'host'}", "pid_mode") \
	_(pid_container, CONTAINER, "{'HostConfig.PidMode':'container:x'}", "pid_mode") \
	_(uts_host, CONTAINER, "{'HostConfig.UTSMode':'host'}", "uts_mode") \
	_(userns_host, CONTAINER, "{'HostConfig.UsernsMode':'host'}", "userns_mode") \
	_(userns_private_ok, CONTAINER, "{'HostConfig.UsernsMode':'private'}", "") \
	_(userns_unknown, CONTAINER, "{'HostConfig.UsernsMode':'bogus'}", "userns_mode") \
	_(cgroupns_host, CONTAINER, "{'HostConfig.CgroupnsMode':'host'}", "cgroupns_mode") \
	_(cgroupns_empty, CONTAINER, "{'HostConfig.CgroupnsMode':''}", "cgroupns_mode") \
	_(ipc_host, CONTAINER, "{'HostConfig.IpcMode':'host'}", "ipc_mode") \
	_(ipc_shareable, CONTAINER, "{'HostConfig.IpcMode':'shareable'}", "ipc_mode") \
	_(ipc_private, CONTAINER, "{'HostConfig.IpcMode':'private'}", "ipc_mode") \
	_(ipc_container, CONTAINER, "{'HostConfig.IpcMode':'container:x'}", "ipc_mode") \
	_(ipc_empty, CONTAINER, "{'HostConfig.IpcMode':''}", "ipc_mode") \
	/* user */ \
	_(user_empty, CONTAINER, "{'Config.User':''}", "user") \
	_(user_0, CONTAINER, "{'Config.User':'0'}", "user") \
	_(user_00, CONTAINER, "{'Config.User':'00'}", "user") \
	_(user_root, CONTAINER, "{'Config.User':'root'}", "user") \
	_(user_ROOT, CONTAINER, "{'Config.User':'ROOT'}", "user") \
	_(user_0_0, CONTAINER, "{'Config.User':'0:0'}", "user") \
	_(user_root_root, CONTAINER, "{'Config.User':'root:root'}", "user") \
	_(user_0_1000, CONTAINER, "{'Config.User':'0:1000'}", "user") \
	_(user_1000_0, CONTAINER, "{'Config.User':'1000:0'}", "user") \
	_(user_1000_root, CONTAINER, "{'Config.User':'1000:root'}", "user") \
	_(user_nobody, CONTAINER, "{'Config.User':'nobody'}", "user") \
	_(user_uid_only, CONTAINER, "{'Config.User':'10001'}", "user") \
	_(user_other, CONTAINER, "{'Config.User':'10002:10002'}", "user") \
	_(user_null, CONTAINER, "{'Config.User':null}", "user") \
	_(user_missing, CONTAINER, "{'-Config.User':0}", "user") \
	/* what runs */ \
	_(entrypoint_shell, CONTAINER, "{'Config.Entrypoint':['/bin/sh']}", "entrypoint") \
	_(entrypoint_extra_arg, CONTAINER, "{'Config.Entrypoint':['/echoer','-x']}", "entrypoint") \
	_(entrypoint_null, CONTAINER, "{'Config.Entrypoint':null}", "entrypoint") \
	_(entrypoint_missing, CONTAINER, "{'-Config.Entrypoint':0}", "entrypoint") \
	_(entrypoint_string, CONTAINER, "{'Config.Entrypoint':'/echoer'}", "entrypoint") \
	_(entrypoint_number, CONTAINER, "{'Config.Entrypoint':[1]}", "entrypoint") \
	_(image_entrypoint_changed, IMAGE, "{'Config.Entrypoint':['/other']}", "entrypoint") \
	_(cmd_set, CONTAINER, "{'Config.Cmd':['exit','3']}", "cmd") \
	_(cmd_empty_ok, CONTAINER, "{'Config.Cmd':[]}", "") \
	_(cmd_missing, CONTAINER, "{'-Config.Cmd':0}", "cmd") \
	_(image_cmd_changed, IMAGE, "{'Config.Cmd':['serve']}", "cmd") \
	_(env_extra, CONTAINER, "{'Config.Env':['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'," \
	  "'EXTRA=1']}", "env") \
	_(env_missing_var, CONTAINER, "{'Config.Env':[]}", "env") \
	_(env_changed, CONTAINER, "{'Config.Env':['PATH=/evil']}", "env") \
	_(env_duplicate, CONTAINER, "{'Config.Env':['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'," \
	  "'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']}", "env") \
	_(env_null, CONTAINER, "{'Config.Env':null}", "env") \
	_(env_number, CONTAINER, "{'Config.Env':[1]}", "env") \
	_(image_env_changed, IMAGE, "{'Config.Env':['PATH=/bin']}", "env") \
	_(runtime_runsc, CONTAINER, "{'HostConfig.Runtime':'runsc'}", "runtime") \
	_(runtime_other, CONTAINER, "{'HostConfig.Runtime':'io.containerd.runc.v2'}", "runtime") \
	_(runtime_missing, CONTAINER, "{'-HostConfig.Runtime':0}", "runtime") \
	/* stdio */ \
	_(tty_true, CONTAINER, "{'Config.Tty':true}", "tty") \
	_(open_stdin_false, CONTAINER, "{'Config.OpenStdin':false}", "stdin") \
	_(stdin_once_false, CONTAINER, "{'Config.StdinOnce':false}", "stdin") \
	_(stdin_once_missing, CONTAINER, "{'-Config.StdinOnce':0}", "stdin") \
	/* docker.sock anywhere */ \
	_(sock_bind, CONTAINER, "{'HostConfig.Binds':['/var/run/docker.sock:/var/run/docker.sock']}", \
	  "binds docker_sock") \
	_(sock_label_value, CONTAINER, "{'Config.Labels.evil':'unix:///var/run/docker.sock'}", "docker_sock") \
	_(sock_label_key, CONTAINER, "{'Config.Labels':{'x/docker.sock':'1'}}", "docker_sock") \
	_(sock_uppercase, CONTAINER, "{'Config.Labels.evil':'/run/DOCKER.SOCK'}", "docker_sock") \
	_(sock_graph_driver, CONTAINER, "{'GraphDriver.Data.MergedDir':'/x/docker.sock'}", "docker_sock") \
	_(sock_image_label, IMAGE, "{'Config.Labels':{'a':'/var/run/docker.sock'}}", "docker_sock") \
	/* the process, judged at no admission's phase: created or running */ \
	_(state_running_ok, CONTAINER, "{" RUNNING "}", "") \
	_(state_exited, CONTAINER, "{'State.Status':'exited'}", "running") \
	_(state_paused, CONTAINER, "{" RUNNING ",'State.Status':'paused','State.Paused':true}", "running") \
	_(state_restarting, CONTAINER, "{" RUNNING ",'State.Status':'restarting','State.Restarting':true}", \
	  "running") \
	_(state_flags_disagree, CONTAINER, "{'State.Running':true}", "running") \
	_(state_running_string, CONTAINER, "{'State.Running':'true'}", "running") \
	_(state_missing, CONTAINER, "{'-State':0}", "running") \
	_(restart_count_1, CONTAINER, "{'RestartCount':1}", "restart_count") \
	_(restart_count_string, CONTAINER, "{'RestartCount':'0'}", "restart_count") \
	_(restart_count_missing, CONTAINER, "{'-RestartCount':0}", "restart_count") \
	_(exec_ids_one, CONTAINER, "{" RUNNING ",'ExecIDs':['16c4ed206a72']}", "exec_ids") \
	_(exec_ids_empty_ok, CONTAINER, "{'ExecIDs':[]}", "") \
	_(exec_ids_object, CONTAINER, "{'ExecIDs':{}}", "exec_ids") \
	_(exec_ids_missing, CONTAINER, "{'-ExecIDs':0}", "exec_ids") \
	/* whole sections broken: refused, never a crash */ \
	_(hostconfig_deleted, CONTAINER, "{'-HostConfig':0}", "*") \
	_(hostconfig_string, CONTAINER, "{'HostConfig':'x'}", "*") \
	_(hostconfig_null, CONTAINER, "{'HostConfig':null}", "*") \
	_(hostconfig_array, CONTAINER, "{'HostConfig':[]}", "*") \
	_(config_deleted, CONTAINER, "{'-Config':0}", "*") \
	_(config_array, CONTAINER, "{'Config':[1,2]}", "*") \
	_(root_array, CONTAINER, "{'':[]}", "*") \
	_(root_null, CONTAINER, "{'':null}", "*") \
	_(root_number, CONTAINER, "{'':42}", "*") \
	_(root_string, CONTAINER, "{'':'x'}", "*") \
	_(root_empty_object, CONTAINER, "{'':{}}", "*") \
	_(image_root_null, IMAGE, "{'':null}", "image_id image_volumes entrypoint cmd env") \
	_(image_root_array, IMAGE, "{'':[]}", "image_id image_volumes entrypoint cmd env") \
	_(image_config_deleted, IMAGE, "{'-Config':0}", "image_volumes entrypoint cmd env") \
	_(image_config_string, IMAGE, "{'Config':'x'}", "image_volumes entrypoint cmd env")

#define MUTANT_DATA(name, d, patch, refused) \
	static struct mutant mutant_##name = { d, patch, refused };
MUTANTS(MUTANT_DATA)
#undef MUTANT_DATA

/* --- JSON helpers ---------------------------------------------------- */

static json_t *
load_fixture(const char *name)
{
	const char *dir = getenv("AIRLOCK_FIXTURES");
	char path[4096];
	json_error_t err;
	json_t *j;

	if (!dir) {
		fprintf(stderr, "AIRLOCK_FIXTURES is not set\n");
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	j = json_load_file(path, 0, &err);
	if (!j)
		fprintf(stderr, "%s: %s (line %d)\n", path, err.text, err.line);
	return j;
}

/* Test JSON is written with single quotes; none of it needs a real one. */
static json_t *
parse_sq(const char *sq)
{
	char *text = strdup(sq), *c;
	json_error_t err;
	json_t *j;

	assert_non_null(text);
	for (c = text; *c; c++)
		if (*c == '\'')
			*c = '"';
	j = json_loads(text, JSON_DECODE_ANY, &err);
	if (!j)
		fail_msg("bad test JSON %s: %s", sq, err.text);
	free(text);
	return j;
}

/* The object holding the last key of a dotted path; the key goes to leaf. */
static json_t *
parent_of(json_t *doc, const char *path, char *leaf, size_t cap)
{
	const char *dot;
	json_t *o = doc;

	while ((dot = strchr(path, '.'))) {
		snprintf(leaf, cap, "%.*s", (int)(dot - path), path);
		o = json_object_get(o, leaf);
		if (!json_is_object(o))
			fail_msg("test path %s: %s is not an object", path, leaf);
		path = dot + 1;
	}
	snprintf(leaf, cap, "%s", path);
	return o;
}

static void
apply_one(json_t **doc, const char *key, json_t *val)
{
	bool del = key[0] == '-';
	char leaf[128];
	json_t *parent;

	if (del)
		key++;
	if (!key[0]) {
		json_decref(*doc);
		*doc = json_incref(val);
		return;
	}
	parent = parent_of(*doc, key, leaf, sizeof leaf);
	if (del)
		assert_int_equal(json_object_del(parent, leaf), 0);
	else if (json_is_string(val) && strcmp(json_string_value(val), "@runsc") == 0)
		assert_int_equal(json_object_set_new(parent, leaf, seccomp_security_opt("runsc")), 0);
	else
		assert_int_equal(json_object_set(parent, leaf, val), 0);
}

static void
apply_patch(json_t **doc, const char *sq)
{
	json_t *patch = parse_sq(sq), *val;
	const char *key;

	json_object_foreach(patch, key, val)
		apply_one(doc, key, val);
	json_decref(patch);
}

/* --- fixture --------------------------------------------------------- */

static int
group_setup(void **state)
{
	(void)state;
	ok_container = load_fixture("inspect-ok.json");
	ok_image = load_fixture("image-ok.json");
	return ok_container && ok_image ? 0 : -1;
}

static int
group_teardown(void **state)
{
	(void)state;
	json_decref(ok_container);
	json_decref(ok_image);
	return 0;
}

/* The profile the ok fixture was created with: the defaults and its image. */
static void
default_profile(struct profile *p)
{
	profile_defaults(p);
	snprintf(p->image, sizeof p->image, "%s",
		 json_string_value(json_object_get(ok_image, "Id")));
}

/* The fixture's profile under runsc: its runtime and the nproc bound. */
static void
runsc_profile(struct profile *p)
{
	snprintf(p->runtime, sizeof p->runtime, "runsc");
	p->nproc = PROFILE_NPROC_RUNSC;
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);

	if (!f)
		return -1;
	f->m = *state;
	f->c = json_deep_copy(ok_container);
	f->img = json_deep_copy(ok_image);
	default_profile(&f->p);
	f->host = (struct host_facts){ .cores = 2, .runtime_runc = true, .runtime_runsc = true };
	check_list_init(&f->r);
	*state = f;
	return f->c && f->img ? 0 : -1;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	json_decref(f->c);
	json_decref(f->img);
	profile_free(&f->p);
	check_list_free(&f->r);
	free(f);
	return 0;
}

/* --- assertions ------------------------------------------------------ */

static bool
printable_text(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* One item per check id, in the X-macro's order, short printable text. */
static void
assert_report_shape(const struct check_list *r)
{
	const struct check_item *it;
	size_t i;

	assert_false(r->oom);
	assert_int_equal(r->n, ADMISSION_CHECK_COUNT);
	for (i = 0; i < r->n; i++) {
		it = &r->items[i];
		assert_string_equal(it->id, admission_check_id((enum admission_check)i));
		assert_true(strlen(it->expected) > 0 && strlen(it->expected) < CHECK_VALUE_MAX);
		assert_true(strlen(it->observed) > 0 && strlen(it->observed) < CHECK_VALUE_MAX);
		if (!printable_text(it->expected) || !printable_text(it->observed))
			fail_msg("%s: unprintable report text", it->id);
		if (!it->pass && strcmp(it->observed, "not checked") == 0)
			fail_msg("%s: the check never decided", it->id);
	}
}

static void
run(struct fixture *f)
{
	check_list_free(&f->r);
	check_list_init(&f->r);
	f->admitted = admission_check_state(f->c, f->img, &f->p, &f->host, NULL, f->state, &f->r);
	assert_report_shape(&f->r);
}

static bool
id_listed(const char *ids, const char *id)
{
	size_t n = strlen(id);
	const char *p;

	for (p = ids; (p = strstr(p, id)); p += n)
		if ((p == ids || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static size_t
count_words(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s != ' ' && (s[1] == ' ' || s[1] == '\0');
	return n;
}

/* Exactly the listed checks refuse; every other one still passes. */
static void
assert_refusals(const struct fixture *f, const char *ids)
{
	const struct check_item *it;
	size_t i;

	if (strcmp(ids, "*") == 0) {
		assert_false(f->admitted);
		return;
	}
	for (i = 0; i < f->r.n; i++) {
		it = &f->r.items[i];
		if (it->pass == id_listed(ids, it->id))
			fail_msg("%s %s (expected %s, observed %s)", it->id,
				 it->pass ? "passed but should refuse" : "refused but should pass",
				 it->expected, it->observed);
	}
	assert_int_equal(check_list_failures(&f->r), count_words(ids));
	assert_int_equal(f->admitted, ids[0] == '\0');
}

static const struct check_item *
item(const struct fixture *f, const char *id)
{
	const struct check_item *it = check_list_find(&f->r, id);

	assert_non_null(it);
	return it;
}

/* Reset the container to the ok fixture plus the given patches. */
static void
reset_container(struct fixture *f, const char *base, const char *patch)
{
	json_decref(f->c);
	f->c = json_deep_copy(ok_container);
	assert_non_null(f->c);
	if (base)
		apply_patch(&f->c, base);
	if (patch)
		apply_patch(&f->c, patch);
}

static void
expect_case(struct fixture *f, const char *base, const char *patch, const char *refused)
{
	reset_container(f, base, patch);
	run(f);
	print_message("    %-60.60s -> %s\n", patch ? patch : "(base)", refused[0] ? refused : "admitted");
	assert_refusals(f, refused);
}

/* --- the tests ------------------------------------------------------- */

static void
test_mutant(void **state)
{
	struct fixture *f = *state;

	const struct check_item *it;
	size_t i;

	apply_patch(f->m->doc == IMAGE ? &f->img : &f->c, f->m->patch);
	run(f);
	for (i = 0; i < f->r.n; i++) {
		it = &f->r.items[i];
		if (!it->pass)
			print_message("    %s: expected %s, observed %s\n", it->id, it->expected, it->observed);
	}
	assert_refusals(f, f->m->refused);
}

static void
test_ok_fixture_admitted(void **state)
{
	struct fixture *f = *state;
	size_t i;

	run(f);
	assert_true(f->admitted);
	assert_int_equal(f->r.n, ADMISSION_CHECK_COUNT);
	for (i = 0; i < f->r.n; i++) {
		assert_string_equal(f->r.items[i].id, admission_check_id((enum admission_check)i));
		assert_true(f->r.items[i].pass);
	}
	assert_string_equal(item(f, "network_mode")->expected, "none");
	assert_string_equal(item(f, "network_mode")->observed, "none");
	assert_string_equal(item(f, "network_disabled")->observed, "true");
	assert_string_equal(item(f, "user")->observed, "10001:10001");
	assert_string_equal(item(f, "entrypoint")->observed, "[\"/echoer\"]");
}

static void
test_ids_and_help(void **state)
{
	size_t i, j;
	const char *id;

	(void)state;
	assert_int_equal(ADMISSION_CHECK_COUNT, 54);
	for (i = 0; i < ADMISSION_CHECK_COUNT; i++) {
		id = admission_check_id((enum admission_check)i);
		assert_true(id[0] && strlen(id) < CHECK_ID_MAX);
		assert_true(admission_check_help((enum admission_check)i)[0]);
		for (j = 0; j < i; j++)
			assert_string_not_equal(id, admission_check_id((enum admission_check)j));
	}
	assert_string_equal(admission_check_id(ADMISSION_IMAGE_ID), "image_id");
	assert_string_equal(admission_check_id(ADMISSION_DOCKER_SOCK), "docker_sock");
	assert_string_equal(admission_check_id(ADMISSION_CHECK_COUNT), "");
	assert_string_equal(admission_check_help((enum admission_check)-1), "");
}

/* The report renders as the docker suite and the CLI expect. */
static void
test_report_text(void **state)
{
	struct fixture *f = *state;
	json_t *j;
	char *s;

	apply_patch(&f->c, "{'HostConfig.NetworkMode':'host','HostConfig.PidsLimit':null}");
	run(f);
	j = check_list_to_json(&f->r, "refuse");
	assert_non_null(j);
	s = json_dumps(j, JSON_COMPACT);
	assert_non_null(s);
	assert_non_null(strstr(s, "{\"check\":\"network_mode\",\"expected\":\"none\","
			       "\"observed\":\"host\",\"verdict\":\"refuse\"}"));
	assert_string_equal(item(f, "pids_limit")->observed, "null (unlimited)");
	assert_string_equal(item(f, "pids_limit")->expected, "32");
	assert_string_equal(item(f, "pid_mode")->expected, "\"\"");
	free(s);
	json_decref(j);
	/* Docker omits the flag when it is false. */
	apply_patch(&f->c, "{'-Config.NetworkDisabled':0}");
	run(f);
	j = check_list_to_json(&f->r, "refuse");
	s = json_dumps(j, JSON_COMPACT);
	assert_non_null(strstr(s, "{\"check\":\"network_disabled\",\"expected\":\"true\","
			       "\"observed\":\"false (absent)\",\"verdict\":\"refuse\"}"));
	free(s);
	json_decref(j);
}

static void
test_missing_and_wrong_type(void **state)
{
	struct fixture *f = *state;

	reset_container(f, "{'-HostConfig':0}", NULL);
	run(f);
	assert_string_equal(item(f, "network_mode")->observed, "missing");
	assert_string_equal(item(f, "binds")->observed, "missing");
	assert_true(item(f, "user")->pass);
	reset_container(f, "{'HostConfig':'x'}", NULL);
	run(f);
	assert_string_equal(item(f, "network_mode")->observed, "wrong type");
	assert_string_equal(item(f, "tmpfs")->observed, "wrong type");
	reset_container(f, "{'HostConfig.NetworkMode':5,'-Config.Tty':0}", NULL);
	run(f);
	assert_string_equal(item(f, "network_mode")->observed, "wrong type");
	assert_string_equal(item(f, "tty")->observed, "missing");
}

static void
test_null_documents(void **state)
{
	struct fixture *f = *state;

	check_list_free(&f->r);
	f->admitted = admission_check(NULL, NULL, &f->p, &f->host, &f->r);
	assert_report_shape(&f->r);
	assert_false(f->admitted);
	assert_int_equal(check_list_failures(&f->r), ADMISSION_CHECK_COUNT);
	json_decref(f->img);
	f->img = NULL;
	run(f);
	assert_refusals(f, "image_id image_volumes entrypoint cmd env");
}

static void
test_null_host_and_profile(void **state)
{
	struct fixture *f = *state;
	size_t i;

	check_list_free(&f->r);
	f->admitted = admission_check(f->c, f->img, &f->p, NULL, &f->r);
	assert_report_shape(&f->r);
	assert_refusals(f, "runtime");
	assert_string_equal(item(f, "runtime")->observed, "host facts unknown");
	check_list_free(&f->r);
	assert_false(admission_check(f->c, f->img, NULL, &f->host, &f->r));
	assert_report_shape(&f->r);
	for (i = 0; i < f->r.n; i++)
		assert_string_equal(f->r.items[i].observed, "no profile");
}

/* Without a pinned image the three IDs must still agree with each other. */
static void
test_image_unpinned(void **state)
{
	struct fixture *f = *state;
	const char *other = "{'Image':'" SHA_A "','Config.Image':'" SHA_A "'}";

	f->p.image[0] = '\0';
	expect_case(f, NULL, NULL, "");
	expect_case(f, NULL, other, "image_id");
	apply_patch(&f->img, "{'Id':'" SHA_A "'}");
	expect_case(f, NULL, other, "");
	expect_case(f, NULL, "{'Image':'" SHA_A "'}", "image_id");
	snprintf(f->p.image, sizeof f->p.image, "%s", SHA_B);
	expect_case(f, NULL, other, "image_id");
}

static void
test_nano_cpus_host_clamp(void **state)
{
	struct fixture *f = *state;
	const char *two = "{'HostConfig.NanoCpus':2000000000}";

	f->p.nano_cpus = 2000000000;
	expect_case(f, NULL, two, "");
	f->host.cores = 1;
	expect_case(f, NULL, two, "nano_cpus");
	f->host.cores = 0;	/* unknown: no clamp beyond the profile's own */
	expect_case(f, NULL, two, "");
}

static void
test_runtimes(void **state)
{
	struct fixture *f = *state;
	const char *runsc = "{'HostConfig.Runtime':'runsc'," RUNSC_NPROC "," RUNSC_SECCOMP ","
			    "'HostConfig.Tmpfs':{'/tmp':'" PROFILE_TMP_GUARD_OPTS "'}}";

	runsc_profile(&f->p);
	expect_case(f, NULL, runsc, "");
	/* the container runs runc */
	expect_case(f, NULL, NULL, "ulimit_nproc runtime tmpfs tmp_covered seccomp");
	f->host.runtime_runsc = false;
	expect_case(f, NULL, runsc, "runtime");
	assert_non_null(strstr(item(f, "runtime")->observed, "not on the daemon"));
	snprintf(f->p.runtime, sizeof f->p.runtime, "runc");
	f->p.nproc = 0;
	f->host.runtime_runc = false;
	expect_case(f, NULL, NULL, "runtime");
}

/* runsc's container with SecurityOpt set to opts (a JSON array, double-quoted). */
static void
expect_runsc_opts(struct fixture *f, json_t *opts, const char *refused)
{
	reset_container(f, NULL, "{'HostConfig.Runtime':'runsc'," RUNSC_NPROC ","
			"'HostConfig.Tmpfs':{'/tmp':'" PROFILE_TMP_GUARD_OPTS "'}}");
	assert_int_equal(json_object_set_new(json_object_get(f->c, "HostConfig"),
					     "SecurityOpt", opts), 0);
	run(f);
	print_message("    runsc SecurityOpt variant -> %s\n", refused[0] ? refused : "admitted");
	assert_refusals(f, refused);
}

/* opts with its last entry's profile text changed at byte at (the entry keeps its length). */
static json_t *
runsc_opts_altered(size_t at)
{
	json_t *opts = seccomp_security_opt("runsc");
	const char *s = json_string_value(json_array_get(opts, 1));
	char *t = strdup(s);

	assert_non_null(t);
	t[at] = t[at] == ' ' ? '\t' : ' ';
	json_array_set_new(opts, 1, json_string(t));
	free(t);
	return opts;
}

/*
 * The seccomp profile by runtime (issue #33): runsc exactly airlock's
 * profile, runc the daemon's default; the report names the profile,
 * never shows its text.
 */
static void
test_seccomp_by_runtime(void **state)
{
	struct fixture *f = *state;
	char digest[32], *colon;
	json_t *opts;

	runsc_profile(&f->p);
	expect_runsc_opts(f, seccomp_security_opt("runsc"), "");
	assert_string_equal(item(f, "seccomp")->observed, "airlock's runsc profile");
	snprintf(digest, sizeof digest, "sha256 %.12s", seccomp_runsc_digest());
	assert_non_null(strstr(item(f, "seccomp")->expected, digest));
	assert_string_equal(item(f, "security_opt")->observed,
			    "[\"no-new-privileges=true\",\"seccomp=<airlock's runsc profile>\"]");
	/* the daemon's default under runsc: clone3 answers EPERM, no thread starts */
	expect_runsc_opts(f, seccomp_security_opt("runc"), "seccomp");
	assert_string_equal(item(f, "seccomp")->observed, "the daemon's default profile");
	/* one byte changed, anywhere: another profile */
	expect_runsc_opts(f, runsc_opts_altered(strlen(SECCOMP_OPT_PREFIX) + 1), "security_opt seccomp");
	assert_null(strstr(item(f, "security_opt")->observed, "defaultAction"));
	assert_non_null(strstr(item(f, "seccomp")->observed, "seccomp=<a profile of"));
	opts = seccomp_security_opt("runsc");
	expect_runsc_opts(f, runsc_opts_altered(json_string_length(json_array_get(opts, 1)) - 2),
			  "security_opt seccomp");
	/* twice */
	json_array_append(opts, json_array_get(opts, 1));
	expect_runsc_opts(f, opts, "security_opt seccomp");
	/* the ":" spelling of the same profile */
	opts = seccomp_security_opt("runsc");
	colon = strdup(json_string_value(json_array_get(opts, 1)));
	assert_non_null(colon);
	colon[strlen("seccomp")] = ':';
	json_array_set_new(opts, 1, json_string(colon));
	free(colon);
	expect_runsc_opts(f, opts, "security_opt seccomp");
	expect_runsc_opts(f, json_pack("[s,s]", "no-new-privileges=true", "seccomp=unconfined"),
			  "security_opt seccomp");
	/* the runsc profile under runc lets clone3 create a user namespace */
	snprintf(f->p.runtime, sizeof f->p.runtime, "runc");
	f->p.nproc = 0;
	expect_case(f, NULL, "{" RUNSC_SECCOMP "}", "seccomp");
	assert_string_equal(item(f, "seccomp")->observed, "airlock's runsc profile");
	assert_string_equal(item(f, "seccomp")->expected, "runc: the daemon's default profile");
	expect_case(f, NULL, NULL, "");
	assert_string_equal(item(f, "seccomp")->observed, "the daemon's default profile");
}

/*
 * runsc: gVisor mounts a writable tmpfs over an empty /tmp that inspect
 * never shows, so the profile adds a read-only one and admission requires
 * it (or the operator's own /tmp tmpfs) to be reported.
 */
static void
test_runsc_tmp_guard(void **state)
{
	struct fixture *f = *state;
	const char *bare = "{'HostConfig.Runtime':'runsc'," RUNSC_NPROC "," RUNSC_SECCOMP "}";
	const char *rw = "{'HostConfig.Runtime':'runsc'," RUNSC_NPROC "," RUNSC_SECCOMP ","
			 "'HostConfig.Tmpfs':{'/tmp':'rw,noexec,nosuid,nodev,size=4096'}}";
	const char *own = "{'HostConfig.Runtime':'runsc'," RUNSC_NPROC "," RUNSC_SECCOMP ","
			  "'HostConfig.Tmpfs':{'/tmp':'rw,noexec,nosuid,nodev,size=65536'}}";

	runsc_profile(&f->p);
	assert_true(profile_tmp_guard(&f->p));
	expect_case(f, NULL, bare, "tmpfs tmp_covered");
	expect_case(f, NULL, rw, "tmpfs");
	f->p.tmpfs[0].target = strdup("/tmp");
	f->p.tmpfs[0].size = 65536;
	f->p.n_tmpfs = 1;
	assert_false(profile_tmp_guard(&f->p));
	expect_case(f, NULL, own, "");
	expect_case(f, NULL, bare, "tmpfs tmp_covered");
	snprintf(f->p.runtime, sizeof f->p.runtime, "runc");
	f->p.nproc = 0;
	expect_case(f, NULL, "{'HostConfig.Tmpfs':{'/tmp':'rw,noexec,nosuid,nodev,size=65536'}}", "");
}

/* A runsc container with the /tmp guard and these ulimits, refused by exactly refused. */
static void
expect_runsc_ulimits(struct fixture *f, const char *ulimits, const char *refused)
{
	char body[512];

	snprintf(body, sizeof body, "{'HostConfig.Runtime':'runsc'," RUNSC_SECCOMP ","
		 "'HostConfig.Tmpfs':{'/tmp':'" PROFILE_TMP_GUARD_OPTS "'},'HostConfig.Ulimits':[%s]}",
		 ulimits);
	expect_case(f, NULL, body, refused);
}

/*
 * runsc: the pids limit counts gVisor's threads (a fork bomb reaching it
 * ends the sandbox), so the agent's processes are bounded by an nproc
 * ulimit inside it, exactly the profile's; under runc an nproc ulimit is
 * one the profile never sets.
 */
static void
test_runsc_nproc(void **state)
{
	struct fixture *f = *state;

	runsc_profile(&f->p);
	expect_runsc_ulimits(f, CORE ",{'Name':'nproc','Soft':32,'Hard':32}", "");
	assert_string_equal(item(f, "ulimit_nproc")->observed, "nproc 32/32");
	expect_runsc_ulimits(f, CORE, "ulimit_nproc");
	expect_runsc_ulimits(f, CORE ",{'Name':'nproc','Soft':64,'Hard':64}",
			     "ulimits_other ulimit_nproc");
	expect_runsc_ulimits(f, CORE ",{'Name':'nproc','Soft':32,'Hard':64}",
			     "ulimits_other ulimit_nproc");
	expect_runsc_ulimits(f, CORE ",{'Name':'nproc','Soft':32,'Hard':32},"
			     "{'Name':'nproc','Soft':32,'Hard':32}", "ulimits_other ulimit_nproc");
	f->p.nproc = 0;		/* a runsc profile without the bound is refused, never admitted */
	expect_runsc_ulimits(f, CORE, "ulimit_nproc");
	snprintf(f->p.runtime, sizeof f->p.runtime, "runc");
	expect_case(f, NULL, "{" RUNSC_NPROC "}", "ulimits_other");
	assert_string_equal(item(f, "ulimit_nproc")->observed, "runc: not needed");
}

static void
test_ipc_private_profile(void **state)
{
	struct fixture *f = *state;

	f->p.ipc = IPC_PRIVATE;
	expect_case(f, NULL, "{'HostConfig.IpcMode':'private'}", "");
	expect_case(f, NULL, NULL, "ipc_mode");
	expect_case(f, NULL, "{'HostConfig.IpcMode':'shareable'}", "ipc_mode");
}

/* nofile, tmpfs, env, entrypoint and cmd all configured. */
static void
custom_profile(struct profile *p)
{
	assert_int_equal(strv_push(&p->entrypoint, "/echoer"), 0);
	assert_int_equal(strv_push(&p->entrypoint, "--serve"), 0);
	assert_int_equal(strv_push(&p->cmd, "mcp"), 0);
	assert_int_equal(strv_push(&p->env, "FOO=bar"), 0);
	assert_int_equal(strv_push(&p->env, "PATH=/app/bin"), 0);
	p->nofile = 1024;
	p->tmpfs[0].target = strdup("/tmp");
	assert_non_null(p->tmpfs[0].target);
	p->tmpfs[0].size = 1048576;
	p->n_tmpfs = 1;
}

static const char custom_inspect[] =
	"{'HostConfig.Ulimits':[" CORE ",{'Name':'nofile','Hard':1024,'Soft':1024}],"
	"'HostConfig.Tmpfs':{'/tmp':'rw,noexec,nosuid,nodev,size=1048576'},"
	"'Config.Env':['FOO=bar','PATH=/app/bin'],"
	"'Config.Entrypoint':['/echoer','--serve'],"
	"'Config.Cmd':['mcp']}";

static void
test_custom_profile(void **state)
{
	struct fixture *f = *state;
	const char *b = custom_inspect;

	custom_profile(&f->p);
	expect_case(f, b, NULL, "");
	expect_case(f, b, "{'Config.Env':['PATH=/app/bin','FOO=bar']}", "");
	expect_case(f, NULL, NULL, "ulimits_other tmpfs entrypoint cmd env");
	expect_case(f, b, "{'HostConfig.Ulimits':[" CORE ",{'Name':'nofile','Hard':2048,'Soft':2048}]}",
		    "ulimits_other");
	expect_case(f, b, "{'HostConfig.Ulimits':[" CORE ",{'Name':'nofile','Hard':4096,'Soft':1024}]}",
		    "ulimits_other");
	expect_case(f, b, "{'HostConfig.Ulimits':[" CORE "]}", "ulimits_other");
	expect_case(f, b, "{'HostConfig.Ulimits':[" CORE ",{'Name':'nofile','Hard':1024,'Soft':1024},"
		    "{'Name':'nofile','Hard':1024,'Soft':1024}]}", "ulimits_other");
	expect_case(f, b, "{'HostConfig.Tmpfs':{'/tmp':'rw,noexec,nosuid,nodev,size=2097152'}}", "tmpfs");
	expect_case(f, b, "{'HostConfig.Tmpfs':{'/tmp':'rw,nosuid,nodev,size=1048576'}}", "tmpfs");
	expect_case(f, b, "{'HostConfig.Tmpfs':{}}", "tmpfs");
	expect_case(f, b, "{'-HostConfig.Tmpfs':0}", "tmpfs");
	expect_case(f, b, "{'HostConfig.Tmpfs':{'/tmp':'rw,noexec,nosuid,nodev,size=1048576',"
		    "'/data':'rw,noexec,nosuid,nodev,size=1048576'}}", "tmpfs");
	expect_case(f, b, "{'HostConfig.Tmpfs':{'/data':'rw,noexec,nosuid,nodev,size=1048576'}}", "tmpfs");
	expect_case(f, b, "{'Config.Env':['FOO=bar','PATH=/app/bin',"
		    "'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']}", "env");
	expect_case(f, b, "{'Config.Env':['FOO=bar',"
		    "'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']}", "env");
	expect_case(f, b, "{'Config.Env':['PATH=/app/bin']}", "env");
	expect_case(f, b, "{'Config.Env':['FOO=bar','PATH=/app/bin','HOME=/']}", "env");
	expect_case(f, b, "{'Config.Entrypoint':['/echoer']}", "entrypoint");
	expect_case(f, b, "{'Config.Entrypoint':['--serve','/echoer']}", "entrypoint");
	expect_case(f, b, "{'Config.Cmd':null}", "cmd");
	expect_case(f, b, "{'Config.Cmd':['mcp','x']}", "cmd");
}

/* Docker's merge of the given Entrypoint/Cmd with the image's. */
static void
test_entrypoint_cmd_merge(void **state)
{
	struct fixture *f = *state;

	apply_patch(&f->img, "{'Config.Cmd':['default']}");
	/* Nothing given: the image's Entrypoint and Cmd. */
	expect_case(f, NULL, "{'Config.Cmd':['default']}", "");
	expect_case(f, NULL, NULL, "cmd");
	/* Only Cmd given: the image's Entrypoint, the given Cmd. */
	assert_int_equal(strv_push(&f->p.cmd, "a"), 0);
	expect_case(f, NULL, "{'Config.Cmd':['a']}", "");
	expect_case(f, NULL, "{'Config.Cmd':['default']}", "cmd");
	/* An Entrypoint given: the image's Cmd is dropped. */
	strv_free(&f->p.cmd);
	assert_int_equal(strv_push(&f->p.entrypoint, "/x"), 0);
	expect_case(f, NULL, "{'Config.Entrypoint':['/x']}", "");
	expect_case(f, NULL, "{'Config.Entrypoint':['/x'],'Config.Cmd':['default']}", "cmd");
	/* Cmd given as []: empty, so the image's Cmd applies. */
	strv_free(&f->p.entrypoint);
	f->p.cmd.set = true;
	expect_case(f, NULL, "{'Config.Cmd':['default']}", "");
	expect_case(f, NULL, "{'Config.Cmd':[]}", "cmd");
	/* Entrypoint given as []: it stays empty, and the image's Cmd applies. */
	strv_free(&f->p.cmd);
	f->p.entrypoint.set = true;
	expect_case(f, NULL, "{'Config.Entrypoint':[],'Config.Cmd':['default']}", "");
	expect_case(f, NULL, "{'Config.Entrypoint':null,'Config.Cmd':['default']}", "");
	expect_case(f, NULL, "{'Config.Cmd':['default']}", "entrypoint");
}

/* Env values can be secrets: the report names variables, never values. */
static void
test_env_values_never_shown(void **state)
{
	struct fixture *f = *state;
	const char *path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	char patch[256];

	assert_int_equal(strv_push(&f->p.env, "TOKEN=hunter2"), 0);
	snprintf(patch, sizeof patch, "{'Config.Env':['%s','TOKEN=hunter2']}", path);
	expect_case(f, NULL, patch, "");
	snprintf(patch, sizeof patch, "{'Config.Env':['%s','TOKEN=leaked']}", path);
	expect_case(f, NULL, patch, "env");
	assert_string_equal(item(f, "env")->observed, "TOKEN has another value");
	assert_null(strstr(item(f, "env")->expected, "hunter2"));
	snprintf(patch, sizeof patch, "{'Config.Env':['%s','TOKEN=hunter2','SECRET=s3cr3t']}", path);
	expect_case(f, NULL, patch, "env");
	assert_string_equal(item(f, "env")->observed, "unexpected SECRET");
	snprintf(patch, sizeof patch, "{'Config.Env':['%s']}", path);
	expect_case(f, NULL, patch, "env");
	assert_string_equal(item(f, "env")->observed, "missing TOKEN");
}

static json_t *
nested_arrays(int depth)
{
	json_t *j = json_string("x"), *a;
	int i;

	for (i = 0; i < depth; i++) {
		a = json_array();
		assert_non_null(a);
		assert_int_equal(json_array_append_new(a, j), 0);
		j = a;
	}
	return j;
}

/* The docker.sock walk is bounded: too deep refuses instead of recursing on. */
static void
test_deep_nesting(void **state)
{
	struct fixture *f = *state;

	json_object_set_new(f->c, "Deep", nested_arrays(30));
	run(f);
	assert_refusals(f, "");
	json_object_set_new(f->c, "Deep", nested_arrays(100));
	run(f);
	assert_refusals(f, "docker_sock");
	json_object_del(f->c, "Deep");
	json_object_set_new(f->img, "Deep", nested_arrays(100));
	run(f);
	assert_refusals(f, "docker_sock");
}

/* Hostile text: truncated to fit, printable, NUL cannot hide a suffix. */
static void
test_hostile_text(void **state)
{
	struct fixture *f = *state;
	char big[2000];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	json_object_set_new(json_object_get(f->c, "HostConfig"), "Binds",
			    json_pack("[s]", big));
	run(f);
	assert_refusals(f, "binds");
	assert_non_null(strstr(item(f, "binds")->observed, "..."));
	reset_container(f, "{'Config.Entrypoint':['/echoer\\u001b[2J\\u0007']}", NULL);
	run(f);
	assert_refusals(f, "entrypoint");
	reset_container(f, NULL, NULL);
	json_object_set_new(json_object_get(f->c, "HostConfig"), "NetworkMode",
			    json_stringn("none\0host", 9));
	json_object_set_new(json_object_get(f->c, "Config"), "User",
			    json_stringn("10001:10001\0x", 13));
	json_object_set_new(json_object_get(f->c, "Config"), "Hostname",
			    json_stringn("x\0/var/run/docker.sock", 22));
	run(f);
	assert_refusals(f, "network_mode user docker_sock");
}

static const char *const breakers[] = {
	NULL, "null", "0", "-1", "\"x\"", "\"\"", "[]", "{}", "true", "1.5", "[[]]", "{\"a\":{}}",
	"9223372036854775807",
};

static void sweep(struct fixture *f, json_t *node);

/* Put each breaker (NULL: delete) at key, run, and put the old value back. */
static void
sweep_key(struct fixture *f, json_t *obj, const char *key)
{
	json_t *old = json_incref(json_object_get(obj, key));
	size_t i;

	for (i = 0; i < sizeof breakers / sizeof breakers[0]; i++) {
		if (!breakers[i])
			json_object_del(obj, key);
		else
			json_object_set_new(obj, key, json_loads(breakers[i], JSON_DECODE_ANY, NULL));
		run(f);
	}
	json_object_set(obj, key, old);
	sweep(f, old);
	json_decref(old);
}

static void
sweep_object(struct fixture *f, json_t *obj)
{
	json_t *keys = json_array(), *val;
	const char *key;
	size_t i;

	assert_non_null(keys);
	json_object_foreach(obj, key, val)
		json_array_append_new(keys, json_string(key));
	for (i = 0; i < json_array_size(keys); i++)
		sweep_key(f, obj, json_string_value(json_array_get(keys, i)));
	json_decref(keys);
}

static void
sweep_array(struct fixture *f, json_t *arr)
{
	json_t *old;
	size_t i, b;

	for (i = 0; i < json_array_size(arr); i++) {
		old = json_incref(json_array_get(arr, i));
		json_array_remove(arr, i);
		run(f);
		json_array_insert(arr, i, old);
		for (b = 1; b < sizeof breakers / sizeof breakers[0]; b++) {
			json_array_set_new(arr, i, json_loads(breakers[b], JSON_DECODE_ANY, NULL));
			run(f);
		}
		json_array_set(arr, i, old);
		sweep(f, old);
		json_decref(old);
	}
}

static void
sweep(struct fixture *f, json_t *node)
{
	if (json_is_object(node))
		sweep_object(f, node);
	else if (json_is_array(node))
		sweep_array(f, node);
}

/* Every key of both documents deleted or retyped: a report, never a crash. */
static void
test_sweep(void **state)
{
	struct fixture *f = *state;

	custom_profile(&f->p);	/* so the profile-driven paths run too */
	reset_container(f, custom_inspect, NULL);
	run(f);
	assert_true(f->admitted);
	sweep(f, f->c);
	sweep(f, f->img);
	run(f);
	assert_true(f->admitted);	/* everything was put back */
}

/*
 * The first admission: the fixture as the daemon reported it, created and
 * never started. A started one, or one with a process, is refused.
 */
static void
test_state_first_admission(void **state)
{
	const struct admission_state created = { .phase = ADMISSION_PHASE_CREATED };
	struct fixture *f = *state;

	f->state = &created;
	expect_case(f, NULL, "{}", "");
	assert_string_equal(item(f, "running")->observed,
			    "created (Running false, Paused false, Restarting false)");
	assert_string_equal(item(f, "process")->observed, "Pid 0");
	assert_string_equal(item(f, "exec_ids")->observed, "null");
	expect_case(f, NULL, "{" RUNNING "}", "running process");
	expect_case(f, NULL, "{'State.Status':'exited','State.StartedAt':'" STARTED_AT "'}", "running");
	expect_case(f, NULL, "{'State.Pid':'0'}", "process");
}

/*
 * The second admission of a cold session: running, never restarted, no
 * exec; with no start recorded the process is shown, not compared.
 */
static void
test_state_second_admission(void **state)
{
	const struct admission_state started = { .phase = ADMISSION_PHASE_STARTED };
	struct fixture *f = *state;

	f->state = &started;
	expect_case(f, NULL, "{}", "running");	/* the fixture: created, never started */
	expect_case(f, NULL, "{" RUNNING "}", "");
	assert_string_equal(item(f, "process")->observed, "Pid 2011, started " STARTED_AT);
	expect_case(f, RUNNING_BASE, "{'State.Running':false,'State.Status':'exited','State.Pid':0}",
		    "running");
	expect_case(f, RUNNING_BASE, "{'State.Status':'paused','State.Paused':true}", "running");
	expect_case(f, RUNNING_BASE, "{'RestartCount':2}", "restart_count");
	expect_case(f, RUNNING_BASE, "{'ExecIDs':['16c4ed206a72','2f0a']}", "exec_ids");
	assert_string_equal(item(f, "exec_ids")->observed, "2 execs running");
	expect_case(f, RUNNING_BASE, "{'ExecIDs':'16c4ed206a72'}", "exec_ids");
}

/*
 * A pooled container's claim: the process its start recorded, exactly. A
 * docker kill and start (or a restart) makes another Pid and StartedAt,
 * RestartCount staying 0.
 */
static void
test_state_pooled_claim(void **state)
{
	struct admission_state started = { .phase = ADMISSION_PHASE_STARTED,
					   .start = { 2011, STARTED_AT } };
	struct fixture *f = *state;

	f->state = &started;
	expect_case(f, RUNNING_BASE, "{}", "");
	assert_string_equal(item(f, "process")->expected,
			    "Pid 2011, started " STARTED_AT " (recorded at its start)");
	expect_case(f, RUNNING_BASE, "{'State.Pid':3567,'State.StartedAt':"
		    "'2026-12-08T00:32:54.625760588Z'}", "process");
	assert_string_equal(item(f, "process")->observed,
			    "Pid 3567, started 2026-12-08T00:32:54.625760588Z");
	expect_case(f, RUNNING_BASE, "{'State.Pid':3567}", "process");	/* a reused Pid: the time differs */
	expect_case(f, RUNNING_BASE, "{'State.StartedAt':'2026-12-08T00:32:54.625760588Z'}", "process");
	expect_case(f, RUNNING_BASE, "{'State.StartedAt':'" STARTED_AT " '}", "process");
	expect_case(f, NULL, "{}", "running process");		/* not started at all */
	expect_case(f, RUNNING_BASE, "{'-State.Pid':0}", "process");
}

/* The process read at a pooled container's start: a running one, its text bounded and printable. */
static void
test_process_read(void **state)
{
	struct fixture *f = *state;
	struct admission_process pr;

	assert_int_equal(admission_process_read(f->c, &pr), -1);	/* created: none */
	assert_int_equal(pr.pid, 0);
	reset_container(f, RUNNING_BASE, NULL);
	assert_int_equal(admission_process_read(f->c, &pr), 0);
	assert_int_equal(pr.pid, 2011);
	assert_string_equal(pr.started_at, STARTED_AT);
	reset_container(f, RUNNING_BASE, "{'State.StartedAt':'2026-12-08 00:32'}");
	assert_int_equal(admission_process_read(f->c, &pr), -1);
	reset_container(f, RUNNING_BASE, "{'State.StartedAt':'" STARTED_AT STARTED_AT "'}");
	assert_int_equal(admission_process_read(f->c, &pr), -1);	/* too long to record */
	reset_container(f, RUNNING_BASE, NULL);
	json_object_set_new(json_object_get(f->c, "State"), "StartedAt", json_stringn("2026\0x", 6));
	assert_int_equal(admission_process_read(f->c, &pr), -1);	/* a NUL would end the comparison */
	reset_container(f, RUNNING_BASE, "{'State.StartedAt':''}");
	assert_int_equal(admission_process_read(f->c, &pr), -1);
	reset_container(f, RUNNING_BASE, "{'State.Pid':-1}");
	assert_int_equal(admission_process_read(f->c, &pr), -1);
	assert_int_equal(admission_process_read(NULL, &pr), -1);
	assert_int_equal(admission_process_read(json_null(), &pr), -1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define MUTANT_TEST(name, d, patch, refused) \
	{ #name, test_mutant, setup, teardown, &mutant_##name },

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ok_fixture_admitted),
		T(test_ids_and_help),
		T(test_report_text),
		T(test_missing_and_wrong_type),
		T(test_null_documents),
		T(test_null_host_and_profile),
		T(test_image_unpinned),
		T(test_nano_cpus_host_clamp),
		T(test_runtimes),
		T(test_seccomp_by_runtime),
		T(test_runsc_tmp_guard),
		T(test_runsc_nproc),
		T(test_ipc_private_profile),
		T(test_custom_profile),
		T(test_entrypoint_cmd_merge),
		T(test_env_values_never_shown),
		T(test_deep_nesting),
		T(test_hostile_text),
		T(test_sweep),
		T(test_state_first_admission),
		T(test_state_second_admission),
		T(test_state_pooled_claim),
		T(test_process_read),
		MUTANTS(MUTANT_TEST)
	};

	return cmocka_run_group_tests_name("admission", tests, group_setup, group_teardown);
}
