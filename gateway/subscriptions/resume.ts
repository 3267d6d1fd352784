import { Kind, type ArgumentNode, type DocumentNode, type FieldNode, type OperationDefinitionNode } from 'graphql';
import type { Admitted } from './admission.js';
import { rootFieldOf } from './live-plan.js';

/** The variable that carries `Last-Event-ID` into the root field's `after`: one name, so one plan for every reconnect. */
const RESUME_VARIABLE = 'liveLastEventId';

/**
 * A reconnect with `Last-Event-ID` (SSE) resumes as `after` does: the root field's `after` becomes that
 * cursor, whatever the document said, so a client that reconnects with the same document misses nothing.
 * Only for a root field that takes `after`; the document is otherwise left as it was.
 */
export function resumedAfter(admitted: Admitted, lastEventId: string): Admitted {
  const root = rootFieldOf(admitted.document, admitted.operationName);
  const after: ArgumentNode = {
    kind: Kind.ARGUMENT,
    name: { kind: Kind.NAME, value: 'after' },
    value: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: RESUME_VARIABLE } },
  };
  const field: FieldNode = {
    ...root,
    arguments: [...(root.arguments ?? []).filter((argument) => argument.name.value !== 'after'), after],
  };
  const document: DocumentNode = {
    ...admitted.document,
    definitions: admitted.document.definitions.map((definition) => {
      if (definition.kind !== Kind.OPERATION_DEFINITION || !definition.selectionSet.selections.includes(root)) {
        return definition;
      }
      const operation: OperationDefinitionNode = {
        ...definition,
        variableDefinitions: [
          ...(definition.variableDefinitions ?? []),
          {
            kind: Kind.VARIABLE_DEFINITION,
            variable: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: RESUME_VARIABLE } },
            type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: 'String' } },
          },
        ],
        selectionSet: {
          ...definition.selectionSet,
          selections: definition.selectionSet.selections.map((selection) => (selection === root ? field : selection)),
        },
      };
      return operation;
    }),
  };
  return { ...admitted, document, variables: { ...admitted.variables, [RESUME_VARIABLE]: lastEventId } };
}

/** Whether a subscription starts from now: its root field is given no `after` cursor (or a null one). */
export function startsNow(admitted: Admitted): boolean {
  const root = rootFieldOf(admitted.document, admitted.operationName);
  const after = root.arguments?.find((argument) => argument.name.value === 'after')?.value;
  if (!after || after.kind === Kind.NULL) return true;
  return after.kind === Kind.VARIABLE && admitted.variables[after.name.value] == null;
}
