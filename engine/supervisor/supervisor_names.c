/*
 * What a cutover may name (supervisor.h, SUPERVISOR_E_TOOL and _ALIAS): a
 * catalog tool some config the engine holds has, or an alias of one,
 * acted on as that catalog tool; and sessions held, by id or prefix.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <string.h>

#include "config.h"
#include "err.h"

/*
 * Under s->lock: does a config the engine holds name tool? Every held
 * session's counts, ended or not (a session started again from the same
 * file has it), as does a tool standing revoked (a restore lifts it). A
 * warm pool holds a profile and no tools, so it names none.
 */
static bool
tool_known(const struct supervisor *s, const char *tool)
{
	size_t i;

	for (i = 0; i < s->n_standing; i++)
		if (strcmp(s->standing[i], tool) == 0)
			return true;
	for (i = 0; i < s->n_standing_hold; i++)
		if (strcmp(s->standing_hold[i], tool) == 0)
			return true;
	for (i = 0; i < s->n_slots; i++)
		if (config_tool_index(s->slots[i]->cfg, tool) >= 0)
			return true;
	return false;
}

/*
 * Under s->lock: the catalog tool alias names in the held configs, into
 * out (SNAP_NAME_MAX). 1 when found, 0 when no config has the alias, -1
 * (err) when two configs map it to different tools: a cutover by the
 * alias would then act on one of them only.
 */
static int
alias_tool(const struct supervisor *s, const char *alias, char *out, struct al_err *err)
{
	const char *tool = NULL, *t;
	size_t i;
	int k;

	for (i = 0; i < s->n_slots; i++) {
		if ((k = config_alias_tool(s->slots[i]->cfg, alias)) < 0)
			continue;
		t = s->slots[i]->cfg->tools[k].name;
		if (tool && strcmp(tool, t) != 0)
			return al_fail(err, SUPERVISOR_E_ALIAS, alias, tool, t);
		tool = t;
	}
	if (tool)
		sup_copy_word(out, SNAP_NAME_MAX, tool);
	return tool != NULL;
}

/*
 * Under s->lock: what a cutover may name, a tool some config has or an
 * alias of one (acted on as that catalog tool), into named; refused with
 * the same words for every client (ctl, attached and local consoles).
 */
static int
tool_named(const struct supervisor *s, const char *tool, char *named, struct al_err *err)
{
	int rc = 0;

	sup_copy_word(named, SNAP_NAME_MAX, tool);
	if (!tool_known(s, tool) && (rc = alias_tool(s, tool, named, err)) == 0)
		rc = al_fail(err, s->n_slots ? SUPERVISOR_E_TOOL : SUPERVISOR_E_TOOL_NONE, tool);
	return rc < 0 ? -1 : 0;
}

int
sup_cutover_names(struct supervisor *s, const char *tool, char *named, const char *const *ids,
	      size_t n_ids, char (*to)[SNAP_ID_MAX], struct al_err *err)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = tool_named(s, tool, named, err);
	if (rc == 0 && ids)
		rc = sup_pick_ids(s, ids, n_ids, to, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* What a cutover would name, with no session to pick: the names' check alone. */
int
supervisor_tool_check(struct supervisor *s, const char *tool, struct al_err *err)
{
	char named[SNAP_NAME_MAX];

	return sup_cutover_names(s, tool, named, NULL, 0, NULL, err);
}
