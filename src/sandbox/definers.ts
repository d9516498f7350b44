// The suite role's own SECURITY DEFINER routines are for twin SQL, which calls them as their owner:
// a role made for an agent (database.expose) must not run them as the suite role. EXECUTE is
// revoked from PUBLIC when the template is built and again after a scenario's state.sql, which may
// create routines of its own.

/** The suite role's own SECURITY DEFINER routines, each as its quoted signature (regprocedure's text). */
export const OWN_DEFINER_ROUTINES = `SELECT p.oid::regprocedure::text AS routine FROM pg_proc p
 WHERE p.prosecdef AND p.proowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) ORDER BY 1`;

/** The statements that take EXECUTE on these routines away from PUBLIC. */
export function definerRevokes(rows: { routine: string }[]): string[] {
  return rows.map((r) => `REVOKE EXECUTE ON ROUTINE ${r.routine} FROM PUBLIC`);
}
