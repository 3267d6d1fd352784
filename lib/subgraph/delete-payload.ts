import { Field, ID, ObjectType, type ClassType } from 'type-graphql';

/**
 * `Delete<Name>Payload`, what every delete of the graph answers: `deletedId`, and the item as the delete
 * left it under its own name (`post`, `contact`). One shape for all, so a client treats every delete
 * alike; the item rides along because a soft delete (a contact) still has it, and the REST contracts
 * answer it.
 */
export function DeletePayloadType<Item extends { id: string }>(itemType: ClassType<Item>, name: string) {
  const itemField = name[0].toLowerCase() + name.slice(1);

  @ObjectType(`Delete${name}Payload`, { description: `What deleting a ${name} answers` })
  class DeletePayload {
    @Field(() => ID, { description: `The id of the deleted ${name}` })
    deletedId!: string;
  }
  // The item's field is named after its type, which a decorator on a fixed property cannot say.
  Field(() => itemType, { description: `The ${name} as the delete left it` })(DeletePayload.prototype, itemField);

  return {
    type: DeletePayload,
    /** The payload of one deleted item. */
    of: (item: Item): DeletePayload => Object.assign(new DeletePayload(), { deletedId: item.id, [itemField]: item }),
  };
}
