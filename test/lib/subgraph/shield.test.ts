import { describe, expect, it } from '@jest/globals';
import { graphql as run, parse, subscribe } from 'graphql';
import { Field, ObjectType, Query, Resolver, Subscription } from 'type-graphql';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Principal } from '#lib/identity.js';
import { allow, requireScope } from '#lib/subgraph/shield.js';
import { buildFederatedSchema } from '#lib/subgraph/federated-schema.js';

@ObjectType()
class Thing {
  @Field(() => String) name!: string;
}

@Resolver()
class ThingResolver {
  @Query(() => [Thing]) things(): Thing[] {
    return [{ name: 'a' }];
  }
  @Query(() => String) forgotten(): string {
    return 'nobody wrote a rule for me';
  }
  @Subscription(() => Thing, {
    subscribe: async function* () {
      yield { name: 'first' };
    },
  })
  thingsAdded(): Thing {
    return { name: 'first' };
  }
}

describe('shield', () => {
  const principal = (scopes: string[] | null): Principal => ({
    userId: 'u',
    scopes: scopes && new Set(scopes),
    via: 'bearer',
  });

  it('denies by default, checks scopes, and lets federation through', async () => {
    const { guarded } = await buildFederatedSchema({
      resolvers: [ThingResolver],
      rules: { Query: { things: requireScope('things.read') } },
    });
    const query = (source: string, who: Principal | null) =>
      run({ schema: guarded, source, contextValue: { principal: who } });

    expect((await query('{ forgotten }', principal(null))).errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect((await query('{ things { name } }', null)).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect((await query('{ things { name } }', principal(['other']))).errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect((await query('{ things { name } }', principal(['things.read']))).data).toEqual({ things: [{ name: 'a' }] });
    expect((await query('{ things { name } }', principal(null))).errors).toBeUndefined();
    expect((await query('{ _service { sdl } }', null)).data?._service).toBeTruthy();

    // A credential the context refused says why, in place of asking the caller to sign in.
    const refused = await run({
      schema: guarded,
      source: '{ things { name } }',
      contextValue: { principal: null, refusal: new AppError(ErrorCode.FORBIDDEN, 'This address may not') },
    });
    expect(refused.errors?.[0]).toMatchObject({ message: 'This address may not', extensions: { code: 'FORBIDDEN' } });
  });

  it('guards a subscription when subscribing, whatever kind of rule it has (allow too)', async () => {
    const stream = async (
      rule: Parameters<typeof requireScope>[0] | ReturnType<typeof requireScope>,
      who: Principal | null,
    ) => {
      const { guarded } = await buildFederatedSchema({
        resolvers: [ThingResolver],
        rules: { Query: { things: allow }, Subscription: { thingsAdded: rule as never } },
      });
      return subscribe({
        schema: guarded,
        document: parse('subscription { thingsAdded { name } }'),
        contextValue: { principal: who },
      });
    };
    const refused = await stream(requireScope('things.read'), null);
    expect('errors' in refused && refused.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const open = await stream(allow, null);
    expect(Symbol.asyncIterator in open).toBe(true);
    const first = await (open as AsyncGenerator<{ data?: unknown }>).next();
    expect(first.value?.data).toEqual({ thingsAdded: { name: 'first' } });
  });
});
