// Which isolation the run's agents get, decided before anything runs: the bubblewrap sandbox, the
// unshare namespaces, containers, or none. None (no root, sudo, user namespaces or container here)
// is refused for the head's agent unless the base's stategate.yml says `agent.isolation: none` (or
// the workflow passes --isolation none): the code under review does not run as the harness's user
// because its own config asked. `agent.network: host` is honoured from the base's config only too.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type IsolationStatus, isolationLine } from '../agent/namespace.js';
import { INSTALL_HINT } from '../agent/sandbox-probe.js';
import type { AgentConfig } from '../config/schema.js';
import type { Side } from '../model/episode.js';
import type { AgentIsolationFacts } from '../model/report.js';
import type { Checkout } from './checkout.js';

export interface IsolationPlan {
  /** What the report and the log say, first. */
  facts: AgentIsolationFacts;
  /** The agents' network: their own loopback, or (agent.network: host in the base's config) the machine's. */
  network: 'own' | 'host';
}

/** Settings of the head's config that only the base's may make, each said as a warning. */
export function ignoredHeadSettings(
  agents: Partial<Record<Side, AgentConfig>>,
  base: AgentConfig | null,
  override?: AgentConfig['isolation'],
): string[] {
  const ignored: string[] = [];
  if (agents.head?.isolation === 'none' && base?.isolation !== 'none' && override !== 'none')
    ignored.push(
      "the head's agent.isolation: none is honoured from the base's stategate.yml only: it changes nothing here",
    );
  if (agents.head?.network === 'host' && base?.network !== 'host')
    ignored.push(
      "the head's agent.network: host is honoured from the base's stategate.yml only: its agent keeps a network of its own",
    );
  return ignored;
}

/** The base's agent section when the base's own stategate.yml gave it (never the head's, pinned in its place). */
export function trustedBaseAgent(
  checkouts: Partial<Record<Side, Checkout>>,
  agents: Partial<Record<Side, AgentConfig>>,
  configName: string,
): AgentConfig | null {
  const base = checkouts.base;
  if (!base || !agents.base || !existsSync(join(base.dir, configName))) return null;
  return agents.base;
}

/** Decides the run's agent isolation; throws when the head's agent may not run here. */
export function planIsolation(input: {
  status: IsolationStatus;
  agents: Partial<Record<Side, AgentConfig>>;
  base: AgentConfig | null;
  /** --isolation / the action's isolation input: the workflow's own word. */
  override?: AgentConfig['isolation'];
}): IsolationPlan {
  const { status, agents, base, override } = input;
  const head = agents.head ?? agents.base;
  const network = base?.network === 'host' ? 'host' : 'own';
  const hostNote =
    network === 'host'
      ? "; agent network: the machine's (agent.network: host in the base's stategate.yml), every server of this machine is reachable"
      : '';
  if (head?.isolation === 'container')
    return {
      facts: {
        mode: status.mode,
        ran: 'container',
        network: 'own',
        uid: 'own',
        note: 'agent isolation: containers with no network but the gateway (agent.isolation: container)',
      },
      network: 'own',
    };
  if (status.mode === 'process-groups') {
    const allowed = base?.isolation === 'none' || override === 'none';
    if (!allowed && agents.head)
      throw new Error(
        `the head's agent cannot be isolated here (${status.reason}), so it does not run: run stategate as root or with passwordless sudo, with bubblewrap installed (${INSTALL_HINT}; the action installs it itself where it can), or where user namespaces work, or with agent.isolation: container (a container runtime); to run it anyway, with the harness's user, files and network, the base's stategate.yml must say agent.isolation: none`,
      );
    const why =
      override === 'none' ? '--isolation none' : "agent.isolation: none in the base's stategate.yml";
    return {
      facts: {
        mode: status.mode,
        ran: 'none',
        network: 'host',
        uid: 'harness',
        note: `agent isolation: none (${why}): the agent runs as the harness's user, with its files, processes and network; process groups only (${status.reason})`,
      },
      network: 'host',
    };
  }
  return {
    facts: {
      mode: status.mode,
      ran: status.sandbox ? 'sandbox' : 'namespaces',
      network,
      uid: (status.sandbox ? status.sandbox.via !== 'userns' : status.asRoot) ? 'own' : 'harness',
      note: `${isolationLine(status)}${hostNote}`,
    },
    network,
  };
}
