// The suite role's own SECURITY DEFINER routines are for twin SQL, which calls them as their owner:
// a role made for an agent (database.expose) must not run them as the suite role, directly or
// through an aggregate. EXECUTE is
// revoked from PUBLIC when the template is built and again after a scenario's state.sql, which may
// create routines of its own.

/**
 * The suite role's own SECURITY DEFINER routines, and its aggregates built on one (calling an
 * aggregate checks EXECUTE on the aggregate only, never on its support functions), each as its
 * quoted signature (regprocedure's text).
 */
export const OWN_DEFINER_ROUTINES = `SELECT p.oid::regprocedure::text AS routine FROM pg_proc p
 WHERE p.proowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
   AND (p.prosecdef OR EXISTS (
     SELECT 1 FROM pg_aggregate a JOIN pg_proc f ON f.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn,
       a.aggserialfn, a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn)
     WHERE a.aggfnoid = p.oid AND f.prosecdef))
 ORDER BY 1`;

/** The statements that take EXECUTE on these routines away from PUBLIC. */
export function definerRevokes(rows: { routine: string }[]): string[] {
  return rows.map((r) => `REVOKE EXECUTE ON ROUTINE ${r.routine} FROM PUBLIC`);
}
