import type { DocumentNode, GraphQLError, GraphQLFormattedError } from 'graphql';

/** Most documents kept; the one least recently asked for goes first. */
const MOST_DOCUMENTS = 1000;

/**
 * Documents parsed and checked once per text, as Apollo Server keeps the documents of queries:
 * every subscriber of a page sends the same subscription, and each would otherwise parse and
 * validate it again and keep a syntax tree of its own for as long as it stays subscribed (a
 * tenth of what an idle subscriber held). A document's tree is never changed once parsed, so all
 * share it; a refused text is kept with its refusal.
 */
export class CheckedDocuments<Refusal extends GraphQLError | GraphQLFormattedError = GraphQLError> {
  private readonly documents = new Map<string, DocumentNode | Refusal[]>();

  constructor(private readonly check: (text: string) => DocumentNode | Refusal[]) {}

  get(text: string): DocumentNode | Refusal[] {
    let checked = this.documents.get(text);
    if (checked) {
      // Asked for again: it moves to the end of the line of what goes first.
      this.documents.delete(text);
    } else {
      checked = this.check(text);
      if (this.documents.size >= MOST_DOCUMENTS) this.documents.delete(this.documents.keys().next().value!);
    }
    this.documents.set(text, checked);
    return checked;
  }
}
