/**
 * For simulator and connector tests (jest): one standalone simulator for the file, emptied, re-seeded and
 * cleared of faults before each test. Answers the simulator's mount URL once the file's tests run.
 */
import { startStandalone, type VendorSimulator } from '../../src/simulators/kit';

export function useStandaloneSimulator(sim: VendorSimulator, seed: () => void): () => string {
  const state = { url: '', close: async () => {} };
  beforeAll(async () => {
    const s = await startStandalone(sim);
    state.url = s.url;
    state.close = s.close;
  });
  afterAll(() => state.close());
  beforeEach(() => {
    sim.reset();
    seed();
    sim.faults.clear();
    sim.faults.resetLog();
  });
  return () => state.url;
}
