#!/usr/bin/env node
// The stategate command: the bundled CLI (dist/cli.js), committed like the action's bundle.
import '../dist/cli.js';
