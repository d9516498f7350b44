// Entry point of the GitHub Action: only calls run().
import { run } from './main.js';

void run();
