// optax.chain for kiln/optax: transformations applied in order, states kept as a list.
import * as tree from "../tree.js";
import { named } from "./base.js";
import type { GradientTransformation, OptState } from "./base.js";

/** Applies `transforms` one after another; the state is the list of their states. */
export function chain(...transforms: GradientTransformation[]): GradientTransformation {
  return named("chain", {
    init(params) {
      const states = transforms.map((t) => t.init(tree.ref(params)));
      tree.dispose(params);
      return states;
    },
    update(updates, state, params) {
      if (!globalThis.Array.isArray(state) || state.length !== transforms.length)
        throw new Error(`chain: got a state that is not a list of ${transforms.length} states, expected the result of this chain's init`);
      let u = updates;
      const states: OptState[] = [];
      transforms.forEach((t, i) => {
        let s: OptState;
        [u, s] = t.update(u, (state as OptState[])[i], params === undefined ? undefined : tree.ref(params));
        states.push(s);
      });
      tree.dispose(params);
      return [u, states];
    },
  });
}
